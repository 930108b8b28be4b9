"""HEP001 conformance: every MUST of §5–§9 (and §12's verification) that a file can show.

``validate(group)`` returns a list of ``(object path, problem)``; every problem names the
section it breaks ("§6.6", "§9 item 2" as "§9.2"). With ``raise_=True`` (the default) a
non-empty list raises :class:`purehep.ValidationError`. Foreign content never makes it fail:
objects that cannot be read or resolved are reported, and checks that need them are skipped.
The search-index kinds (§8.3–§8.7) are checked by :mod:`.validate_search`; which MUSTs are
checked and which cannot be is listed in README.md ("Validator").
"""
import numpy as np

from ..errors import PurehepError, ValidationError
from ..hl.base import ExternalLink, SoftLink
from . import indexes as ix
from ._attrs import deref, get_text, is_dataset, is_group, same, text
from .anndata_layout import is_anndata_categorical
from .table import CLASS, is_table, members
from .validate_search import label, search_problems
from .vtypes import attr_type, bool_attr, explicit_fill, ref_attr, string_attr

#: column dtypes where no value outside the value range exists, so §6.4's fill value cannot
#: be "outside of the column values range": bool, variable-length and opaque/compound types
NO_FREE_FILL = "bOV"
READ_ERRORS = (PurehepError, OSError, KeyError, ValueError)


def validate(group, verify_indexes=True, raise_=True):
    """Check a table group; ``verify_indexes`` also rebuilds each index and compares (§12)."""
    if not is_table(group):
        problems = [(getattr(group, "name", "?"),
                     f"no scalar CLASS attribute equal to {CLASS!r}: not a table group (§5.1)")]
    else:
        problems = _checked(group.name, lambda: _table_problems(group, verify_indexes))
    if problems and raise_:
        raise ValidationError("HEP001 violations:\n" + "\n".join(f"  {p}: {m}" for p, m in problems))
    return problems


def _checked(path, check):
    """``check()``'s problems, or one problem when reading the file fails under it."""
    try:
        return check()
    except READ_ERRORS as e:
        return [(path, f"unreadable: {type(e).__name__}: {e} (§5.5)")]


class _Parts:
    """A table group's direct members sorted by role (Terminology, §5.5, §6, §7)."""

    def __init__(self, group):
        self.group = group
        self.objects = members(group)
        self.datasets = {n: o for n, o in self.objects.items()
                         if is_dataset(o) and n != ix.SEARCH_GROUP}   # that one: §8.1
        self.anndata = {}         # name -> Anndata categorical group (README "Anndata")
        if get_text(group, "encoding-type") == "dataframe":
            self.anndata = {n: o for n, o in self.objects.items() if is_anndata_categorical(o)}
            self.datasets.update({n: o["codes"] for n, o in self.anndata.items()})
        by_addr = {o.addr: n for n, o in self.datasets.items()}
        self.categories = {}
        for name, ds in self.datasets.items():
            if attr_type(ds, "_categories") is not None and ref_attr(ds, "_categories", 0) == []:
                for cat in deref(ds.file, ds.attrs["_categories"]):
                    if cat is not None and cat.addr in by_addr:
                        self.categories[by_addr[cat.addr]] = cat
        self.order = None
        if "column-order" in group.attrs and string_attr(group, "column-order", rank=1) == []:
            self.order = [text(v) for v in np.asarray(group.attrs["column-order"]).reshape(-1)]
        self.indexes = {n for n, d in self.datasets.items() if "_columns_list" in d.attrs}
        listed = set(self.order or ())
        self.columns = {n: d for n, d in self.datasets.items()
                        if n not in self.categories and (n not in self.indexes or n in listed)}

    def name_of(self, obj):
        """The member name of ``obj`` when it is a direct member dataset, else None."""
        for name, ds in self.datasets.items():
            if same(ds, obj):
                return name
        return None


def _table_problems(group, verify_indexes):
    parts = _Parts(group)
    problems = _group_attrs(parts) + _children(parts) + _column_order(parts)
    for name, ds in parts.datasets.items():
        problems += _checked(ds.name, lambda: _dataset_problems(parts, name, ds))
    problems += _lengths(parts)
    problems += _checked(group.name, lambda: search_problems(parts, verify_indexes))
    return problems


# --- §5 the table group ---------------------------------------------------------------------

def _group_attrs(parts):
    g = parts.group
    problems = [(g.name, m) for m in string_attr(g, "CLASS", ascii=True, size=len(CLASS),
                                                 section="§5.1")]
    problems += [(g.name, m) for m in string_attr(g, "VERSION", ascii=True, required=True,
                                                  section="§5.2")]
    if string_attr(g, "VERSION", fixed=False, ascii=False) == []:
        version = text(g.attrs["VERSION"]) if "VERSION" in g.attrs else "1"
        if version.split(".")[0] != "1":
            problems.append((g.name, f"VERSION {version!r} is not a revision 1.x table (§5.2)"))
    for name in ("TITLE", "description", "_index", "units_vocabulary", "encoding-type"):
        problems += [(g.name, m) for m in string_attr(g, name, section="§5.3")]
    problems += [(g.name, m) for m in string_attr(g, "column-order", rank=1, section="§5.3")]
    if "_index" in g.attrs and string_attr(g, "_index") == []:
        label = text(g.attrs["_index"])
        if label not in parts.datasets:
            problems.append((g.name, f"_index names {label!r}, which is no column or index "
                                     "dataset of the table (§5.3)"))
    return problems


def _children(parts):
    """Only columns, indexes, categories and _search_indexes below a table group (§5.5)."""
    g = parts.group
    problems = []
    for name in g.keys():
        path = f"{g.name.rstrip('/')}/{name}"
        link = g.get(name, getlink=True)
        if isinstance(link, ExternalLink):
            problems.append((path, f"an external link to {link.path!r} in {link.filename!r}: "
                                   "a table holds only its own objects (§5.5)"))
            continue
        if name not in parts.objects:
            problems.append((path, "a link that does not resolve to an object of the table (§5.5)"))
            continue
        obj = parts.objects[name]
        if isinstance(link, SoftLink) and not _inside(link.path, g.name):
            problems.append((path, f"a soft link to {link.path!r}, outside the table (§5.5)"))
        if name in parts.anndata:
            continue
        if name == ix.SEARCH_GROUP:
            if not is_group(obj):
                problems.append((path, "_search_indexes must be a group (§8.1; a column may "
                                       "not take the reserved name, §6.1)"))
        elif is_table(obj):
            problems.append((path, "a table group nested in a table (§5.5)"))
        elif not is_dataset(obj):
            problems.append((path, f"a {type(obj).__name__.lower()} under a table group: only "
                                   "columns, indexes, categories and _search_indexes (§5.5)"))
    return problems


def _inside(target, table_path):
    prefix = table_path.rstrip("/") + "/"
    return not target.startswith("/") or target.startswith(prefix)


def _column_order(parts):
    """column-order lists every column dataset exactly once and nothing else (§9.6)."""
    if parts.order is None:
        return []
    g, order = parts.group, parts.order
    problems = []
    repeated = sorted({n for n in order if order.count(n) > 1})
    if repeated:
        problems.append((g.name, f"column-order repeats {repeated} (§9.6)"))
    strange = [n for n in dict.fromkeys(order) if n not in parts.datasets]
    if strange:
        problems.append((g.name, f"column-order lists {strange}, which are not column datasets "
                                 "of the table (§9.6)"))
    unlisted = sorted(set(parts.columns) - set(order))
    if unlisted:
        problems.append((g.name, f"column-order omits the column datasets {unlisted} (§9.6)"))
    return problems


def _lengths(parts):
    """One length for every column and index dataset (§6.1, §7.1, §9.1)."""
    names = dict.fromkeys([*parts.columns, *sorted(parts.indexes)])
    lengths = {n: parts.datasets[n].shape[0] for n in names if len(parts.datasets[n].shape) == 1}
    if len(set(lengths.values())) > 1:
        return [(parts.group.name, f"column and index datasets differ in length: {lengths} (§9.1)")]
    return []


# --- §6 columns, §7 index datasets ----------------------------------------------------------

def _dataset_problems(parts, name, ds):
    problems = []
    is_column = name in parts.columns
    if (is_column or name in parts.indexes) and len(ds.shape) != 1:
        what = "column" if is_column else "index"   # §6.1 / §7.1
        problems.append((ds.name, f"rank {len(ds.shape)}: {what} datasets have rank 1 "
                                  f"({'§6.1' if is_column else '§7.1'})"))
    for attr in ("units", "units_vocabulary", "description"):
        problems += [(ds.name, m) for m in string_attr(ds, attr, section="§6.5")]
    if is_column:
        problems += _fill_problems(ds)
    problems += _categorical_problems(parts, ds)
    problems += _label_links(parts, ds)
    if name in parts.categories:
        problems += _categories_dataset(parts, ds)
    return problems


def _fill_problems(ds):
    """§6.4: the fill value is set explicitly (where the type has values outside any range)."""
    if ds.dtype.kind in NO_FREE_FILL or explicit_fill(ds):
        return []
    return [(ds.name, "no explicit fill value (H5Pset_fill_value) marks its missing values (§6.4)")]


def _categorical_problems(parts, ds):
    """§6.6 (and §9.5): integer codes, one scalar reference to a valid categories dataset."""
    if attr_type(ds, "_categories") is None:
        if ds.name.endswith("/codes") and parts.name_of(ds) in parts.anndata:
            return [(ds.name, "Anndata categorical codes lack the _categories reference (§6.6)")]
        return []
    problems = [(ds.name, m) for m in ref_attr(ds, "_categories", 0, section="§6.6")]
    if ds.dtype.kind not in "iu":
        problems.append((ds.name, f"a categorical column has integer codes, not {ds.dtype} (§6.6)"))
    if problems:
        return problems
    cat = deref(ds.file, ds.attrs["_categories"])[0]
    if cat is None:
        return [(ds.name, "_categories does not resolve (§9.5)")]
    anndata = parts.anndata.get(parts.name_of(ds))
    if anndata is not None:
        problems += _anndata_categorical(anndata, ds, cat)
    elif not is_dataset(cat) or parts.name_of(cat) is None:
        return [(ds.name, f"_categories -> {label(cat)}, not a dataset directly under the table "
                          "(§6.6 item 1, §9.5)")]
    if explicit_fill(ds) and ds.dtype.kind in "iu" and len(cat.shape) == 1 and \
            0 <= int(ds.fillvalue) < cat.shape[0]:
        problems.append((ds.name, f"fill value {ds.fillvalue} is the code of a category: it "
                                  "must denote a missing category (§6.6)"))
    return problems


def _anndata_categorical(group, codes, cat):
    """A categorical column in Anndata's encoding (§10, README "Anndata"): ``_categories``
    names the group's ``categories``, 1-D; the group carries encoding-version and a scalar
    boolean ``ordered``."""
    problems = []
    if not same(cat, group["categories"]):
        problems.append((codes.name, f"_categories -> {label(cat)}, not the categories of its "
                                     "Anndata categorical group (§6.6, §10)"))
    if len(group["categories"].shape) != 1:
        problems.append((group.name, "Anndata categories are 1-D (§6.6, §10)"))
    problems += [(group.name, m) for m in string_attr(group, "encoding-version", required=True,
                                                      fixed=False, section="§10")]
    problems += [(group.name, m) for m in bool_attr(group, "ordered", section="§6.6, §10")]
    return problems


def _categories_dataset(parts, cat):
    """The categories dataset: rank 1, encoding-type "categorical", scalar boolean ordered."""
    problems = []
    if len(cat.shape) != 1:
        problems.append((cat.name, f"a categories dataset has rank 1, not {len(cat.shape)} (§6.6)"))
    problems += [(cat.name, m) for m in string_attr(cat, "encoding-type", required=True,
                                                    fixed=False, section="§6.6")]
    if "encoding-type" in cat.attrs and not problems[-1:] and \
            text(cat.attrs["encoding-type"]) != "categorical":
        problems.append((cat.name, f"encoding-type {text(cat.attrs['encoding-type'])!r} is not "
                                   "'categorical' (§6.6)"))
    problems += [(cat.name, m) for m in bool_attr(cat, "ordered", required=True, section="§6.6")]
    return problems


def _label_links(parts, ds):
    """_indexes and _columns_list: references, both ways, between members (§6.5, §7)."""
    problems = []
    for name, back, section in (("_indexes", "_columns_list", "§6.5"),
                                ("_columns_list", "_indexes", "§7.1")):
        if attr_type(ds, name) is None:
            continue
        bad = ref_attr(ds, name, 1, section=section)
        problems += [(ds.name, m) for m in bad]
        if not bad:
            for target in deref(ds.file, ds.attrs[name]):
                problems += _mutual(parts, ds, name, target, back, "§7.2")
    return problems


def _mutual(parts, obj, attr, target, back, section):
    """``obj.attrs[attr]`` names ``target``, a direct member dataset whose ``back`` names it."""
    if target is None:
        return [(obj.name, f"{attr} holds a reference that does not resolve ({section})")]
    if not is_dataset(target) or parts.name_of(target) is None:
        return [(obj.name, f"{attr} -> {label(target)}, not a dataset directly under the table "
                           f"({'§7.1' if back == '_indexes' or attr == '_indexes' else section})")]
    if attr_type(target, back) is None or ref_attr(target, back, 1) != [] or \
            not any(same(t, obj) for t in deref(target.file, target.attrs[back])):
        return [(obj.name, f"{attr} -> {target.name}, which does not list it in {back} ({section})")]
    return []
