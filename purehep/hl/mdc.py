"""h5py's metadata cache calls of a FileID (``f.id``: the File), as far as purehep has a
metadata cache: the decoded structures of the file (object headers, heaps, B-tree nodes,
global heap collections, ...) that purehep.format.context.Context.cached keeps, each decoded
once and kept while the file is open (dropped at each commit of a file open for writing).

``get_mdc_hit_rate`` is its measured hit rate, lookups that found the structure decoded over
all lookups since the file was opened or ``reset_mdc_hit_rate_stats`` (0.0 with none, as
libhdf5's H5Fget_mdc_hit_rate). ``get_mdc_config`` / ``set_mdc_config`` hold a CacheConfig
(purehep.h5p) as libhdf5's metadata cache settings, which purehep's cache does not apply: it
has no size bound to set. There is no ``get_mdc_size``: purehep does not measure the bytes its
decoded structures take, nor bound them, and libhdf5's (max_size, min_clean_size, cur_size,
entries) would have to be made up.
"""
import copy


class MetadataCacheCalls:
    """The FileID calls of h5py's H5Fget_mdc_* family (a mixin of File)."""

    _mdc_config = None

    def get_mdc_hit_rate(self):
        """Hits over lookups of the decoded-structure cache since open or the last reset."""
        ctx = self._open_ctx()
        lookups = ctx.hits + ctx.misses
        return ctx.hits / lookups if lookups else 0.0

    def reset_mdc_hit_rate_stats(self):
        """Start counting the hit rate afresh (H5Freset_mdc_hit_rate_stats)."""
        ctx = self._open_ctx()
        ctx.hits = ctx.misses = 0

    def get_mdc_config(self):
        """A copy of the metadata cache settings: those set with ``set_mdc_config``, else
        those of the file access list (libhdf5's defaults)."""
        self._open_ctx()
        if self._mdc_config is None:
            return self.get_access_plist().get_mdc_config()
        return copy.copy(self._mdc_config)

    def set_mdc_config(self, config):
        """Hold ``config`` (a purehep.h5p.CacheConfig; TypeError otherwise, as h5py's)."""
        from ..h5p import cache_config
        self._open_ctx()
        self._mdc_config = cache_config(config)

    def _open_ctx(self):
        if not self.id:
            raise ValueError("Not a file id (not a file ID)")
        return self._ctx
