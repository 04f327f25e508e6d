"""The converters, one module per op family; importing this package registers them all."""
from . import (conv, creation, elementwise, indexing, nn, pool, reduction, shape,  # noqa: F401
               views)
