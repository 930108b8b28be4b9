"""Numbers stored in any floating-point layout of up to 8 bytes (IV.A.2.d, class 1: sign
location, exponent and mantissa locations and sizes, exponent bias, mantissa normalization),
as libhdf5's soft conversion H5T__conv_f_f writes them from the IEEE half, single and double
floats numpy holds (other numbers are taken as doubles first; purehep.format.convert reads
them back).

libhdf5's steps, element by element: the sign is copied; zero, infinity and NaN (exponent and
mantissa all ones) are written as such; otherwise the true exponent is rebiased, values too
small for a denormal become zero, those too large infinity, and denormals shift the mantissa
right. A mantissa cut short is rounded on its first dropped bit (half up), the carry raising
the exponent (infinity past the largest exponent), except that the largest finite value is
not rounded up into infinity; where the source or the destination is denormal the carry is
dropped (the mantissa bits wrap), as libhdf5 does. Bits outside the sign, exponent and mantissa
are written as zeros (libhdf5 leaves what the conversion buffer held there).
"""
import numpy as np

from ..errors import UnsupportedFeatureError

_IEEE = {2: (10, 5, 15), 4: (23, 8, 127), 8: (52, 11, 1023)}  # mantissa bits, exponent, bias
_ONE = np.uint64(1)


def _u(x):
    return np.asarray(x, np.uint64)


def _mask(n):
    """(1 << n) - 1 for bit counts ``n`` (0..64), elementwise."""
    n = np.asarray(n, np.int64)
    return np.where(n >= 64, np.uint64(~np.uint64(0)),
                    (_ONE << _u(np.clip(n, 0, 63))) - _ONE)


def _shr(x, s):
    s = np.asarray(s, np.int64)
    return np.where(s >= 64, np.uint64(0), _u(x) >> _u(np.clip(s, 0, 63)))


def _shl(x, s):
    s = np.asarray(s, np.int64)
    return np.where(s >= 64, np.uint64(0), _u(x) << _u(np.clip(s, 0, 63)))


def _put(word, pos, n, value):
    """``word`` with bits pos..pos+n-1 set to ``value``'s low bits (bits past 63 dropped)."""
    m = _shl(_mask(n), pos)
    return (word & ~m) | (_shl(_u(value), pos) & m)


def _source(values):
    """(sign, biased exponent, mantissa, (mantissa bits, exponent bits, bias)) of numbers
    as the IEEE float they are held in (a double for anything else)."""
    arr = np.asarray(values)
    if arr.dtype.kind != "f" or arr.dtype.itemsize not in _IEEE:
        arr = arr.astype(np.float64)
    size = arr.dtype.itemsize
    mant, exp, bias = _IEEE[size]
    bits = np.ascontiguousarray(arr, arr.dtype.newbyteorder("=")).view(f"u{size}")
    bits = bits.reshape(-1).astype(np.uint64)
    return (bits >> _u(mant + exp)) & _ONE, ((bits >> _u(mant)) & _mask(exp)).astype(np.int64), \
        bits & _mask(mant), (mant, exp, bias)


def encode(values, datatype):
    """``values`` as stored elements of the floating-point Datatype ``datatype``: an array of
    ``V{size}`` of the values' shape."""
    size = datatype.size
    if size > 8:
        raise UnsupportedFeatureError(f"writing a floating-point layout of {size} bytes "
                                      "(purehep writes custom floats of up to 8 bytes)")
    sign, e, m, (smant, sexp, sbias) = _source(values)
    words = _words(sign, e, m, smant, sexp, sbias, datatype.float_layout)
    raw = words.astype("<u8").view(np.uint8).reshape(-1, 8)[:, :size]
    if datatype.order == ">":
        raw = raw[:, ::-1]
    return np.ascontiguousarray(raw).view(f"V{size}").reshape(np.shape(values))


def rounded(values, datatype):
    """``values`` as libhdf5 stores them in the layout of ``datatype``, in its dtype (the
    float h5py names for the layout holds each of its values exactly): what a write from a
    wider memory type (H5Dwrite's conversion) leaves, for writers that hold values in the
    dataset's dtype. Layouts without an implied leading bit are left to the dtype's cast:
    libhdf5 reads their denormals back as other numbers than it wrote."""
    if datatype.float_layout[6] != 2:
        return values
    from ..format.convert import from_file
    return from_file(None, datatype, encode(values, datatype))


def _words(sign, e, m, smant, sexp, sbias, layout):
    """The destination's bits (uint64) of each source number (H5T__conv_f_f)."""
    spos, epos, esize, mpos, msize_d, bias, norm = layout
    emax = (1 << esize) - 1
    word = sign << _u(spos)
    special = e == (1 << sexp) - 1
    zero, nan = (e == 0) & (m == 0), special & (m != 0)
    # the source mantissa below its leading one, and the true exponent
    lead = np.where(m > 0, np.frexp(m.astype(np.float64))[1] - 1, 0)
    denormal = e == 0
    msize = np.where(denormal, np.maximum(lead, 1), smant)
    m = np.where(denormal & (lead == 0), np.uint64(0), m)
    expo = np.where(denormal, -((sbias - 1) + (smant - lead)), e - sbias) + bias
    mrsh = np.full(e.shape, int(norm == 0), np.int64)
    tiny = expo < -msize_d
    sub = ~tiny & (expo <= 0)
    over = ~tiny & ~sub & (expo >= emax)
    mrsh = np.where(sub, mrsh + 1 - expo, mrsh)
    denormal = denormal | sub
    expo = np.where(tiny | sub, 0, np.where(over, emax, expo))
    msize = np.where(tiny | over, 0, msize)
    m, carry = _round(m, msize, mrsh, expo, denormal, msize_d, emax)
    word = _mantissa(word, m, msize, mrsh, np.where(carry, 2, 1), mpos, msize_d)
    expo = np.where(carry, expo + 1, expo)
    word = np.where(carry & (expo >= emax), _put(word, mpos, msize_d, 0), word)
    word = _put(word, epos, esize, np.minimum(expo, emax))
    return _specials(word, sign, zero, special & ~nan, nan, layout)


def _round(m, msize, mrsh, expo, denormal, msize_d, emax):
    """The mantissa rounded on its first dropped bit, and where that carried past its top
    (not where the source or destination is denormal: there the bits wrap)."""
    cond = (msize > 0) & (mrsh <= msize_d) & (mrsh + msize > msize_d)
    cut = np.where(cond, mrsh + msize - msize_d, 1)
    first = (_shr(m, cut - 1) & _ONE).astype(bool) & cond
    rest = msize - cut
    top = (_shr(m, cut) & _mask(rest)) == _mask(rest)
    up = first & (denormal | ~top | (expo < emax - 1))
    width = 1 + msize - cut
    field = (_shr(m, cut - 1) & _mask(width)) + _ONE
    carry = up & ~denormal & (_shr(field, width) != 0)
    return np.where(up, _put(m, cut - 1, width, field), m), carry


def _mantissa(word, m, msize, mrsh, implied, mpos, msize_d):
    """``word`` with the destination mantissa written from the source's ``msize`` bits
    shifted right by ``mrsh`` (the leading bit ``implied`` written where it shows)."""
    d = msize_d
    fits = mrsh < d
    head = mpos + d - mrsh
    out = np.where(fits & (mrsh > 0),
                   _put(_put(word, head, mrsh, 0), head, 2, implied), word)
    long_ = fits & (mrsh + msize >= d)
    copied = _put(out, mpos, d - mrsh, _shr(m, msize + mrsh - d))
    short = _put(_put(out, mpos + d - (mrsh + msize), msize, m), mpos, d - (mrsh + msize), 0)
    out = np.where(long_, copied, np.where(fits, short, out))
    out = np.where(mrsh > d + 1, _put(word, mpos, d, 0), out)
    out = np.where(mrsh == d + 1, _put(_put(word, mpos + 1, d - 1, 0), mpos, 1, 1), out)
    return np.where(mrsh == d, _put(_put(word, mpos, d, 0), mpos, min(2, d), implied), out)


def _specials(word, sign, zero, inf, nan, layout):
    """Zeros, infinities and NaNs, as libhdf5 writes them (an infinity of a layout without
    an implied leading bit has that bit set)."""
    spos, epos, esize, mpos, msize_d, _, norm = layout
    base = sign << _u(spos)
    ones = _put(base, epos, esize, (1 << esize) - 1)
    word = np.where(zero, base, word)
    word = np.where(inf, _put(ones, mpos + msize_d - 1, 1, 1) if norm == 0 else ones, word)
    return np.where(nan, _put(ones, mpos, msize_d, _mask(msize_d)), word)
