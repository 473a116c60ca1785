"""softswitch front end: preprocess, parse, check and lower P4_16 v1model source to ``ir``."""
from . import ir
from .errors import P4Error, P4InfoError, P4SyntaxError, P4TypeError, P4Unsupported, PreprocessorError
from .load import load_preprocessed, load_program, load_source
from .preprocess import Preprocessed, preprocess_file, preprocess_source

__all__ = [
           "P4Error",
           "P4InfoError",
           "P4SyntaxError",
           "P4TypeError",
           "P4Unsupported",
           "Preprocessed",
           "PreprocessorError",
           "ir",
           "load_preprocessed",
           "load_program",
           "load_source",
           "preprocess_file",
           "preprocess_source",
]
