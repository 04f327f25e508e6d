"""The converters, one module per op family; importing this package registers them all."""
from . import (attention, conv, creation, distance, elementwise, indexing, nn, norm,  # noqa: F401
               pool, random, reduction, scan, segment, shape, sort, views)
