"""The h5py-like object layer: File, Group, Dataset, Datatype, AttributeManager, links."""
