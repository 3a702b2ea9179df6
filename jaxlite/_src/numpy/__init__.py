"""jax.numpy's implementation. ``namespace`` gathers it for the public ``jaxlite.numpy``
and for library code above numpy; modules in this package import each other directly, each
only from the modules before it in this order (no import cycles):

  util                      promotion and argument checks
  shape_ops                 reshaping, transposing, broadcasting, flipping
  creation                  array/asarray, zeros/ones/full, arange, eye, meshgrid
  ufuncs, spacing           elementwise functions (three-argument where), linspace & co
  reductions, cumulative    sum, mean, var, argmax, ...; cumsum & co
  indexing, index_update    getitem, take; the ``.at[]`` updates
  joining                   concatenate, stack, split, tile, repeat, roll
  differences, sorting      diff, gradient, trapezoid; sort, argsort, searchsorted
  histograms, searching     bincount, histogram*; nonzero, where, compress, select
  setops, linalg_ops        unique, isin, ...; dot, matmul, einsum, trace
  statistics, array_edit    quantiles, cov; pad, insert, delete
  vectorize, linalg, scalar_types, fft, extra_creation, extra_indexing, convolution,
  ufunc_objects, polynomial, windows_io, array_methods, namespace
"""
