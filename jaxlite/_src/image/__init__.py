"""Library code of ``jaxlite.image`` (resampling of images)."""
