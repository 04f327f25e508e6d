"""The converters, one module per op family; importing this package registers them all."""
from . import (attention, conv, creation, elementwise, indexing, nn, norm, pool,  # noqa: F401
               reduction, scan, segment, shape, sort, views)
