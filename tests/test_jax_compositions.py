"""jaxlite's composite math functions compose the same lax primitives, in the same order and
with the same constants, as JAX 0.10.2's (jnp's logarithms and float bit tricks,
jax.scipy.special, jax.scipy.stats, jax.nn): then they give JAX's float32 numbers bit for
bit wherever the primitives do.

``EXPECTED`` holds JAX's jaxpr of each function on float32 arrays of shape (3,), flattened
(jit and custom_jvp calls inlined) into ``primitive[:literal,...]`` tokens; it is checked
against jaxlite's always and against a live JAX when jax is installed. The values are also
checked against SciPy/NumPy references on ~1000 float32 inputs, to a tolerance."""
import numpy as np
import pytest
import scipy.special as ss
import scipy.stats as sst

import jaxlite
import jaxlite.scipy.special  # noqa: F401
import jaxlite.scipy.stats  # noqa: F401

_INLINED = ("jit", "pjit", "custom_jvp_call", "custom_vjp_call", "closed_call")


def _lit(v):
    # (a weak Python float operand of float32 arithmetic counts as its float32 value)
    v = np.asarray(v)
    if v.dtype.kind == "f":
        return repr(float(v.astype(np.float32)))
    return str(v.item())


def flatten(closed, out=None, known=None):
    """The equations of the closed jaxpr ``closed`` with jit/custom_jvp calls inlined, as
    tokens ``name`` or ``name:c,c``: its scalar constant operands' values, sorted, whether
    they are literals, closed-over constants or constants passed into an inlined call."""
    out = [] if out is None else out
    jaxpr = getattr(closed, "jaxpr", closed)
    known = dict(known or {})
    known.update((v, c) for v, c in zip(jaxpr.constvars, getattr(closed, "consts", ()))
                 if np.ndim(c) == 0)

    def value(v):
        if type(v).__name__ == "Literal":
            return v.val
        return known.get(v, None)
    for e in jaxpr.eqns:
        sub = e.params.get("jaxpr", e.params.get("call_jaxpr"))
        if e.primitive.name in _INLINED and sub is not None:
            inner = getattr(sub, "jaxpr", sub)
            passed = {iv: value(ov) for iv, ov in zip(inner.invars, e.invars)
                      if value(ov) is not None}
            flatten(sub, out, passed)
            continue
        lits = sorted(_lit(value(v)) for v in e.invars if value(v) is not None)
        out.append(e.primitive.name + (":" + ",".join(lits) if lits else ""))
    return out


def resolve(root, path):
    """``root.scipy.stats.norm.logpdf`` and the like; ``numpy.`` means ``root.numpy``."""
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


_ARGS = {
    "x": np.array([0.3, 1.5, -2.5], np.float32),
    "y": np.array([0.7, -0.2, 4.0], np.float32),
    "pos": np.array([0.3, 1.5, 9.5], np.float32),
    "p": np.array([0.02, 0.5, 0.9], np.float32),
    "k": np.array([0.0, 1.0, 3.0], np.float32),
    "simplex": np.array([0.2, 0.3, 0.5], np.float32),
    "cov": np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]], np.float32),
}


def make_args(spec):
    """Arguments from a spec like ``"x s:2.0"`` (named arrays, ``s:`` float32 scalars)."""
    return tuple(np.float32(float(a[2:])) if a.startswith("s:") else _ARGS[a]
                 for a in spec.split())


CASES = [
    ("numpy.log10", "pos"), ("numpy.log2", "pos"), ("numpy.hypot", "x y"),
    ("numpy.heaviside", "x y"), ("numpy.signbit", "x"), ("numpy.copysign", "x y"),
    ("numpy.spacing", "x"), ("numpy.modf", "x"), ("numpy.logaddexp", "x y"),
    ("numpy.isclose", "x y"),
    ("scipy.special.ndtr", "x"), ("scipy.special.log_ndtr", "x"),
    ("scipy.special.ndtri", "p"), ("scipy.special.xlogy", "x pos"),
    ("scipy.special.xlog1py", "x p"), ("scipy.special.entr", "x"),
    ("scipy.special.betaln", "pos y"), ("scipy.special.logit", "p"),
    ("scipy.special.loggamma", "x"), ("scipy.special.factorial", "pos"),
    ("scipy.special.comb", "pos y"), ("scipy.special.boxcox", "pos y"),
    ("scipy.special.boxcox1p", "pos y"), ("scipy.special.rel_entr", "p pos"),
    ("scipy.special.kl_div", "p pos"),
    ("scipy.special.logsumexp", "x"), ("nn.logsumexp", "x"), ("nn.sparse_plus", "x"),
    ("scipy.stats.norm.logpdf", "x"), ("scipy.stats.norm.pdf", "x"),
    ("scipy.stats.norm.cdf", "x"), ("scipy.stats.norm.logcdf", "x"),
    ("scipy.stats.norm.sf", "x"), ("scipy.stats.norm.logsf", "x"),
    ("scipy.stats.norm.ppf", "p"), ("scipy.stats.norm.isf", "p"),
    ("scipy.stats.t.logpdf", "x s:3.0"), ("scipy.stats.gamma.logpdf", "pos s:2.0"),
    ("scipy.stats.gamma.cdf", "pos s:2.0"), ("scipy.stats.gamma.sf", "pos s:2.0"),
    ("scipy.stats.beta.logpdf", "p s:2.0 s:3.0"), ("scipy.stats.beta.cdf", "p s:2.0 s:3.0"),
    ("scipy.stats.beta.sf", "p s:2.0 s:3.0"), ("scipy.stats.chi2.logpdf", "pos s:3.0"),
    ("scipy.stats.chi2.cdf", "pos s:3.0"), ("scipy.stats.chi2.sf", "pos s:3.0"),
    ("scipy.stats.expon.logpdf", "x"), ("scipy.stats.expon.cdf", "x"),
    ("scipy.stats.expon.logcdf", "x"), ("scipy.stats.expon.sf", "x"),
    ("scipy.stats.expon.ppf", "p"), ("scipy.stats.logistic.logpdf", "x"),
    ("scipy.stats.logistic.cdf", "x"), ("scipy.stats.logistic.ppf", "p"),
    ("scipy.stats.logistic.isf", "p"), ("scipy.stats.laplace.logpdf", "x"),
    ("scipy.stats.laplace.cdf", "x"), ("scipy.stats.cauchy.logpdf", "x"),
    ("scipy.stats.cauchy.cdf", "x"), ("scipy.stats.cauchy.sf", "x"),
    ("scipy.stats.cauchy.ppf", "p"), ("scipy.stats.cauchy.isf", "p"),
    ("scipy.stats.uniform.logpdf", "x"), ("scipy.stats.uniform.cdf", "x"),
    ("scipy.stats.uniform.ppf", "p"), ("scipy.stats.poisson.logpmf", "k s:2.0"),
    ("scipy.stats.poisson.cdf", "k s:2.0"), ("scipy.stats.binom.logpmf", "k s:5.0 s:0.3"),
    ("scipy.stats.geom.logpmf", "k s:0.3"), ("scipy.stats.nbinom.logpmf", "k s:5.0 s:0.3"),
    ("scipy.stats.bernoulli.logpmf", "k s:0.3"), ("scipy.stats.bernoulli.cdf", "k s:0.3"),
    ("scipy.stats.betabinom.logpmf", "k s:5.0 s:2.0 s:3.0"),
    ("scipy.stats.dirichlet.logpdf", "simplex pos"),
    ("scipy.stats.pareto.logpdf", "pos s:2.5"), ("scipy.stats.pareto.cdf", "pos s:2.5"),
    ("scipy.stats.pareto.logcdf", "pos s:2.5"), ("scipy.stats.pareto.sf", "pos s:2.5"),
    ("scipy.stats.pareto.logsf", "pos s:2.5"), ("scipy.stats.pareto.ppf", "p s:2.5"),
    ("scipy.stats.gennorm.logpdf", "x s:1.5"), ("scipy.stats.gennorm.cdf", "x s:1.5"),
    ("scipy.stats.vonmises.logpdf", "x s:2.0"), ("scipy.stats.wrapcauchy.logpdf", "pos s:0.4"),
]

EXPECTED = {
    'numpy.isclose': ('ne ne and is_finite sub abs abs mul:9.999999747378752e-06 '
                      'add:9.99999993922529e-09 le eq and or'),
    'numpy.log10': 'log mul:0.4342944920063019',
    'numpy.log2': 'log log:2.0 div',
    'numpy.hypot': (
        'abs abs eq:inf eq:inf or max min eq:0.0 eq:0.0 broadcast_in_dim:1.0 select_n div '
        'square add:1.0 sqrt mul select_n broadcast_in_dim:inf select_n'),
    'numpy.heaviside': (
        'lt:0.0 gt:0.0 ne select_n broadcast_in_dim:1.0 select_n broadcast_in_dim:0.0 '
        'select_n'),
    'numpy.signbit': 'bitcast_convert_type shift_right_arithmetic:31 convert_element_type',
    'numpy.copysign': (
        'bitcast_convert_type shift_right_arithmetic:31 convert_element_type abs neg abs '
        'select_n'),
    'numpy.spacing': (
        'bitcast_convert_type shift_right_arithmetic:31 convert_element_type abs:inf neg '
        'abs:inf broadcast_in_dim broadcast_in_dim select_n nextafter sub eq:0.0 '
        'bitcast_convert_type shift_right_arithmetic:31 convert_element_type '
        'abs:1.401298464324817e-45 neg abs:1.401298464324817e-45 broadcast_in_dim '
        'broadcast_in_dim select_n select_n'),
    'numpy.modf': 'ge:0.0 floor ceil select_n sub',
    'numpy.logaddexp': 'max sub ne add abs neg exp log1p add select_n',
    'scipy.special.ndtr': (
        'mul:0.7071067690849304 abs lt:0.7071067690849304 erf add:1.0 gt:0.0 erfc sub:2.0 '
        'erfc select_n select_n mul:0.5'),
    'scipy.special.log_ndtr': (
        'gt:5.0 neg max:-10.0 select_n mul:0.7071067690849304 abs lt:0.7071067690849304 '
        'erf add:1.0 gt:0.0 erfc sub:2.0 erfc select_n select_n mul:0.5 neg gt:-10.0 log '
        'min:-10.0 square mul:-0.5 neg log sub sub:0.9189385175704956 square '
        'broadcast_in_dim:0.0 broadcast_in_dim:0.0 div:1.0 add mul div:3.0 add mul '
        'div:15.0 add mul add:1.0 sub log add select_n select_n'),
    'scipy.special.ndtri': (
        'gt:0.8646647334098816 sub:1.0 select_n eq:0.0 broadcast_in_dim:0.5 select_n '
        'sub:0.5 square mul broadcast_in_dim:0.0 scan broadcast_in_dim:0.0 scan div mul '
        'add mul:-2.5066282749176025 log mul:-2.0 sqrt log div sub div:1.0 '
        'broadcast_in_dim:0.0 scan div:1.0 broadcast_in_dim:0.0 scan div div div:1.0 '
        'broadcast_in_dim:0.0 scan div:1.0 broadcast_in_dim:0.0 scan div div sub sub '
        'gt:0.1353352814912796 ge:8.0 select_n select_n gt:0.8646647334098816 neg '
        'select_n broadcast_in_dim:inf eq:0.0 neg eq:1.0 select_n select_n'),
    'scipy.special.xlogy': 'ne:0.0 ne or log mul broadcast_in_dim:0.0 select_n',
    'scipy.special.xlog1py': 'ne:0.0 ne or log1p mul broadcast_in_dim:0.0 select_n',
    'scipy.special.entr': (
        'lt:0.0 broadcast_in_dim:-inf ne:0.0 ne or log mul broadcast_in_dim:0.0 select_n '
        'neg select_n'),
    'scipy.special.betaln': (
        'min max lgamma lgamma add lgamma sub add lgamma div add:1.0 div add:1.0 div '
        'sub:0.5 add mul add add:1.0 mul add add:1.0 mul add add:1.0 mul add add:1.0 mul '
        'add add:1.0 div:1.0 integer_pow mul:-0.0016532295849174261 mul '
        'mul:0.0008373080054298043 add mul mul:-0.0005952029023319483 add mul '
        'mul:0.0007936506881378591 add mul mul:-0.0027777778450399637 add mul '
        'add:0.0833333358168602 div mul div log1p mul log sub:1.0 mul le sub sub sub sub '
        'select_n add lt:8.0 select_n'),
    'scipy.special.logit': 'sub:1.0 div log',
    'scipy.special.loggamma': 'lgamma gt:0.0 convert_element_type:nan broadcast_in_dim select_n',
    'scipy.special.factorial': 'lt:0.0 add:1.0 lgamma exp convert_element_type:0 broadcast_in_dim select_n',
    'scipy.special.comb': (
        'le ge:0.0 and ge:0.0 and convert_element_type:0.0 broadcast_in_dim select_n '
        'convert_element_type:0.0 broadcast_in_dim select_n add:1.0 lgamma add:1.0 lgamma '
        'sub add:1.0 sub lgamma sub exp convert_element_type:0.0 broadcast_in_dim '
        'select_n'),
    'scipy.special.boxcox': 'eq:0.0 broadcast_in_dim:1.0 select_n log mul expm1 div select_n',
    'scipy.special.boxcox1p': 'eq:0.0 broadcast_in_dim:1.0 select_n log1p mul expm1 div select_n',
    'scipy.special.rel_entr': (
        'gt:0.0 gt:0.0 and eq:0.0 ge:0.0 and convert_element_type:1 broadcast_in_dim '
        'select_n convert_element_type:1 broadcast_in_dim select_n ne:0.0 ne or log mul '
        'broadcast_in_dim:0.0 select_n ne:0.0 ne or log mul broadcast_in_dim:0.0 select_n '
        'sub convert_element_type:inf broadcast_in_dim:0.0 broadcast_in_dim select_n '
        'select_n'),
    'scipy.special.kl_div': (
        'gt:0.0 gt:0.0 and eq:0.0 ge:0.0 and convert_element_type:1 broadcast_in_dim '
        'select_n convert_element_type:1 broadcast_in_dim select_n ne:0.0 ne or log mul '
        'broadcast_in_dim:0.0 select_n ne:0.0 ne or log mul broadcast_in_dim:0.0 select_n '
        'sub convert_element_type:inf broadcast_in_dim:0.0 broadcast_in_dim select_n '
        'select_n sub add'),
    'scipy.special.logsumexp': (
        'reduce_max max:-inf is_finite select_n:0.0 stop_gradient broadcast_in_dim sub '
        'exp reduce_sum sign abs log add'),
    'nn.logsumexp': (
        'reduce_max max:-inf is_finite select_n:0.0 stop_gradient broadcast_in_dim sub '
        'exp reduce_sum sign abs log add'),
    'nn.sparse_plus': (
        'le:-1.0 ge:1.0 add:1.0 integer_pow div:4.0 select_n convert_element_type:0.0 '
        'broadcast_in_dim select_n'),
    'scipy.stats.norm.logpdf': 'square:1.0 mul:6.2831854820251465 log sub:0.0 square div add div:-2.0',
    'scipy.stats.norm.pdf': 'square:1.0 mul:6.2831854820251465 log sub:0.0 square div add div:-2.0 exp',
    'scipy.stats.norm.cdf': (
        'sub:0.0 div:1.0 mul:0.7071067690849304 abs lt:0.7071067690849304 erf add:1.0 '
        'gt:0.0 erfc sub:2.0 erfc select_n select_n mul:0.5'),
    'scipy.stats.norm.logcdf': (
        'sub:0.0 div:1.0 gt:5.0 neg max:-10.0 select_n mul:0.7071067690849304 abs '
        'lt:0.7071067690849304 erf add:1.0 gt:0.0 erfc sub:2.0 erfc select_n select_n '
        'mul:0.5 neg gt:-10.0 log min:-10.0 square mul:-0.5 neg log sub '
        'sub:0.9189385175704956 square broadcast_in_dim:0.0 broadcast_in_dim:0.0 div:1.0 '
        'add mul div:3.0 add mul div:15.0 add mul add:1.0 sub log add select_n select_n'),
    'scipy.stats.norm.sf': (
        'neg neg:0.0 sub div:1.0 mul:0.7071067690849304 abs lt:0.7071067690849304 erf '
        'add:1.0 gt:0.0 erfc sub:2.0 erfc select_n select_n mul:0.5'),
    'scipy.stats.norm.logsf': (
        'neg neg:0.0 sub div:1.0 gt:5.0 neg max:-10.0 select_n mul:0.7071067690849304 abs '
        'lt:0.7071067690849304 erf add:1.0 gt:0.0 erfc sub:2.0 erfc select_n select_n '
        'mul:0.5 neg gt:-10.0 log min:-10.0 square mul:-0.5 neg log sub '
        'sub:0.9189385175704956 square broadcast_in_dim:0.0 broadcast_in_dim:0.0 div:1.0 '
        'add mul div:3.0 add mul div:15.0 add mul add:1.0 sub log add select_n select_n'),
    'scipy.stats.norm.ppf': (
        'gt:0.8646647334098816 sub:1.0 select_n eq:0.0 broadcast_in_dim:0.5 select_n '
        'sub:0.5 square mul broadcast_in_dim:0.0 scan broadcast_in_dim:0.0 scan div mul '
        'add mul:-2.5066282749176025 log mul:-2.0 sqrt log div sub div:1.0 '
        'broadcast_in_dim:0.0 scan div:1.0 broadcast_in_dim:0.0 scan div div div:1.0 '
        'broadcast_in_dim:0.0 scan div:1.0 broadcast_in_dim:0.0 scan div div sub sub '
        'gt:0.1353352814912796 ge:8.0 select_n select_n gt:0.8646647334098816 neg '
        'select_n broadcast_in_dim:inf eq:0.0 neg eq:1.0 select_n select_n mul:1.0 '
        'add:0.0'),
    'scipy.stats.norm.isf': (
        'sub:1.0 gt:0.8646647334098816 sub:1.0 select_n eq:0.0 broadcast_in_dim:0.5 '
        'select_n sub:0.5 square mul broadcast_in_dim:0.0 scan broadcast_in_dim:0.0 scan '
        'div mul add mul:-2.5066282749176025 log mul:-2.0 sqrt log div sub div:1.0 '
        'broadcast_in_dim:0.0 scan div:1.0 broadcast_in_dim:0.0 scan div div div:1.0 '
        'broadcast_in_dim:0.0 scan div:1.0 broadcast_in_dim:0.0 scan div div sub sub '
        'gt:0.1353352814912796 ge:8.0 select_n select_n gt:0.8646647334098816 neg '
        'select_n broadcast_in_dim:inf eq:0.0 neg eq:1.0 select_n select_n mul:1.0 '
        'add:0.0'),
    'scipy.stats.t.logpdf': (
        'sub:0.0 div:1.0 div:2.0 add:0.5 mul:1.0,1.0 mul:3.1415927410125732 mul log '
        'div:2.0 lgamma add lgamma sub mul div log1p mul add neg'),
    'scipy.stats.gamma.logpdf': (
        'ge:0.0 sub:0.0 div:1.0 broadcast_in_dim:1.0 select_n sub:1.0 ne:0.0 ne or log '
        'mul broadcast_in_dim:0.0 select_n sub lgamma log:1.0 add sub '
        'convert_element_type:-inf broadcast_in_dim select_n'),
    'scipy.stats.gamma.cdf': 'sub:0.0 div:1.0 clamp:0.0,inf igamma',
    'scipy.stats.gamma.sf': 'sub:0.0 div:1.0 lt:0.0 igammac convert_element_type:1 broadcast_in_dim select_n',
    'scipy.stats.beta.logpdf': (
        'min max lgamma lgamma add lgamma sub add lgamma div add:1.0 div add:1.0 div '
        'sub:0.5 add mul add add:1.0 mul add add:1.0 mul add add:1.0 mul add add:1.0 mul '
        'add add:1.0 div:1.0 integer_pow mul:-0.0016532295849174261 mul '
        'mul:0.0008373080054298043 add mul mul:-0.0005952029023319483 add mul '
        'mul:0.0007936506881378591 add mul mul:-0.0027777778450399637 add mul '
        'add:0.0833333358168602 div mul div log1p mul log sub:1.0 mul le sub sub sub sub '
        'select_n add lt:8.0 select_n neg sub:0.0 div:1.0 sub:1.0 ne:0.0 ne or log mul '
        'broadcast_in_dim:0.0 select_n sub:1.0 neg ne:0.0 ne or log1p mul '
        'broadcast_in_dim:0.0 select_n add add log:1.0 sub add:0.0,1.0 gt lt:0.0 or '
        'convert_element_type:-inf broadcast_in_dim select_n le:0.0 le:0.0 or le:0.0,1.0 '
        'or convert_element_type:nan broadcast_in_dim select_n'),
    'scipy.stats.beta.cdf': 'sub:0.0 div:1.0 clamp:0.0,1.0 regularized_incomplete_beta',
    'scipy.stats.beta.sf': 'sub:0.0 div:1.0 clamp:0.0,1.0 sub:1.0 regularized_incomplete_beta',
    'scipy.stats.chi2.logpdf': (
        'sub:0.0 div:1.0 div:2.0 sub:1.0 log mul div:2.0 sub lgamma log:2.0 mul div:2.0 '
        'add neg log:1.0 sub add lt:0.0 convert_element_type:-inf broadcast_in_dim '
        'select_n'),
    'scipy.stats.chi2.cdf': 'div:2.0 sub:0.0 mul:1.0,2.0 div clamp:0.0,inf igamma',
    'scipy.stats.chi2.sf': 'div:2.0 sub:0.0 mul:1.0,2.0 div clamp:0.0,inf igammac',
    'scipy.stats.expon.logpdf': (
        'log:1.0 sub:0.0 div:1.0 add neg lt:0.0 convert_element_type:-inf '
        'broadcast_in_dim select_n'),
    'scipy.stats.expon.cdf': 'sub:0.0 div:1.0 lt:0.0 broadcast_in_dim:0.0 expm1 neg select_n',
    'scipy.stats.expon.logcdf': 'sub:0.0 div:1.0 lt:0.0 broadcast_in_dim:0.0 select_n exp neg log1p',
    'scipy.stats.expon.sf': 'sub:0.0 div:1.0 lt:0.0 broadcast_in_dim:0.0 select_n exp',
    'scipy.stats.expon.ppf': (
        'ne lt:0.0 or gt:1.0 or neg log1p mul:1.0 sub:0.0 convert_element_type:nan '
        'broadcast_in_dim select_n'),
    'scipy.stats.logistic.logpdf': (
        'sub:0.0 div:1.0 div:2.0 neg:2.0 neg max sub ne add abs neg exp log1p add '
        'select_n mul log:1.0 sub'),
    'scipy.stats.logistic.cdf': 'sub:0.0 div:1.0 logistic',
    'scipy.stats.logistic.ppf': 'sub:1.0 div log mul:1.0 add:0.0',
    'scipy.stats.logistic.isf': 'sub:1.0 div log neg mul:1.0 add:0.0',
    'scipy.stats.laplace.logpdf': 'sub:0.0 abs div:1.0 mul:1.0,2.0 log add neg',
    'scipy.stats.laplace.cdf': 'sub:0.0 div:1.0 le:0.0 exp mul:0.5 neg exp mul:0.5 sub:1.0 select_n',
    'scipy.stats.cauchy.logpdf': 'sub:0.0 div:1.0 mul:1.0,3.1415927410125732 log mul log1p add neg',
    'scipy.stats.cauchy.cdf': 'sub:0.0 div:1.0 div:1.0,3.1415927410125732 atan mul add:0.5',
    'scipy.stats.cauchy.sf': 'neg neg:0.0 sub div:1.0 div:1.0,3.1415927410125732 atan mul add:0.5',
    'scipy.stats.cauchy.ppf': 'mul:3.1415927410125732 sub:1.5707963705062866 tan mul:1.0 add:0.0',
    'scipy.stats.cauchy.isf': 'mul:3.1415927410125732 sub:1.5707963705062866 tan mul:1.0 add:0.0',
    'scipy.stats.uniform.logpdf': (
        'log:1.0 neg add:0.0,1.0 gt lt:0.0 or convert_element_type:-inf broadcast_in_dim '
        'broadcast_in_dim select_n'),
    'scipy.stats.uniform.cdf': (
        'lt:0.0 add:0.0,1.0 gt ge:0.0 add:0.0,1.0 le and sub:0.0 div:1.0 '
        'broadcast_in_dim:False stack argmax broadcast_in_dim:0.0 broadcast_in_dim:0.0 '
        'broadcast_in_dim:1.0 select_n'),
    'scipy.stats.uniform.ppf': (
        'ne lt:0.0 or gt:1.0 or mul:1.0 add:0.0 convert_element_type:nan broadcast_in_dim '
        'select_n'),
    'scipy.stats.poisson.logpmf': (
        'sub:0.0 ne:0.0 ne or log mul broadcast_in_dim:0.0 select_n add:1.0 lgamma sub '
        'sub lt:0.0 round ne or convert_element_type:-inf broadcast_in_dim select_n'),
    'scipy.stats.poisson.cdf': 'sub:0.0 add:1.0 floor igammac lt:0.0 broadcast_in_dim:0.0 select_n',
    'scipy.stats.binom.logpmf': (
        'sub:0.0 add:1.0 lgamma add:1.0 lgamma sub add:1.0 lgamma add sub ne:0.0 ne or '
        'log mul broadcast_in_dim:0.0 select_n sub neg ne:0.0 ne or log1p mul '
        'broadcast_in_dim:0.0 select_n add add eq:0.0 eq:0.0 and eq:0.0 or '
        'convert_element_type:0.0 broadcast_in_dim select_n ge:0.0 add:0.0 add:1.0 lt and '
        'convert_element_type:-inf broadcast_in_dim select_n'),
    'scipy.stats.geom.logpmf': (
        'sub:0.0 sub:1.0 neg ne:0.0 ne or log1p mul broadcast_in_dim:0.0 select_n log add '
        'le:0.0 convert_element_type:-inf broadcast_in_dim select_n'),
    'scipy.stats.nbinom.logpmf': (
        'sub:0.0 add lgamma lgamma sub add:1.0 lgamma sub ne:0.0 ne or log mul '
        'select_n:0.0 sub:1.0 ne:0.0 ne or log mul broadcast_in_dim:0.0 select_n add add '
        'lt:0.0 convert_element_type:-inf broadcast_in_dim select_n'),
    'scipy.stats.bernoulli.logpmf': (
        'sub:0.0 ne:0.0 ne or log mul broadcast_in_dim:0.0 select_n sub:1.0 neg ne:0.0 ne '
        'or log1p mul broadcast_in_dim:0.0 select_n add lt:0.0 gt:1.0 or '
        'convert_element_type:-inf broadcast_in_dim select_n'),
    'scipy.stats.bernoulli.cdf': (
        'ne ne or lt:0.0 or gt:1.0 or lt:0.0 ge:0.0 lt:1.0 and ge:1.0 sub:1.0 '
        'broadcast_in_dim:False stack argmax broadcast_in_dim:0.0 broadcast_in_dim:nan '
        'broadcast_in_dim:0.0 broadcast_in_dim broadcast_in_dim:1.0 select_n'),
    'scipy.stats.betabinom.logpmf': (
        'floor sub:0.0 log1p sub add:1.0 add:1.0 min max lgamma lgamma add lgamma sub add '
        'lgamma div add:1.0 div add:1.0 div sub:0.5 add mul add add:1.0 mul add add:1.0 '
        'mul add add:1.0 mul add add:1.0 mul add add:1.0 div:1.0 integer_pow '
        'mul:-0.0016532295849174261 mul mul:0.0008373080054298043 add mul '
        'mul:-0.0005952029023319483 add mul mul:0.0007936506881378591 add mul '
        'mul:-0.0027777778450399637 add mul add:0.0833333358168602 div mul div log1p mul '
        'log sub:1.0 mul le sub sub sub sub select_n add lt:8.0 select_n add neg add sub '
        'add min max lgamma lgamma add lgamma sub add lgamma div add:1.0 div add:1.0 div '
        'sub:0.5 add mul add add:1.0 mul add add:1.0 mul add add:1.0 mul add add:1.0 mul '
        'add add:1.0 div:1.0 integer_pow mul:-0.0016532295849174261 mul '
        'mul:0.0008373080054298043 add mul mul:-0.0005952029023319483 add mul '
        'mul:0.0007936506881378591 add mul mul:-0.0027777778450399637 add mul '
        'add:0.0833333358168602 div mul div log1p mul log sub:1.0 mul le sub sub sub sub '
        'select_n add lt:8.0 select_n min max lgamma lgamma add lgamma sub add lgamma div '
        'add:1.0 div add:1.0 div sub:0.5 add mul add add:1.0 mul add add:1.0 mul add '
        'add:1.0 mul add add:1.0 mul add add:1.0 div:1.0 integer_pow '
        'mul:-0.0016532295849174261 mul mul:0.0008373080054298043 add mul '
        'mul:-0.0005952029023319483 add mul mul:0.0007936506881378591 add mul '
        'mul:-0.0027777778450399637 add mul add:0.0833333358168602 div mul div log1p mul '
        'log sub:1.0 mul le sub sub sub sub select_n add lt:8.0 select_n sub add eq:0.0 '
        'eq:0.0 and convert_element_type:0.0 broadcast_in_dim select_n neg:0.0 lt gt or '
        'add le:0.0 or convert_element_type:-inf broadcast_in_dim select_n lt:0.0 le:0.0 '
        'or le:0.0 or convert_element_type:nan broadcast_in_dim select_n'),
    'scipy.stats.dirichlet.logpdf': (
        'lgamma reduce_sum reduce_sum lgamma sub sub:1.0 ne:0.0 ne or log mul '
        'broadcast_in_dim:0.0 select_n reduce_sum sub reduce_sum gt:0.0 reduce_and '
        'sub:1.0 abs lt:9.999999974752427e-07 and convert_element_type:-inf select_n'),
    'scipy.stats.pareto.logpdf': (
        'sub:0.0 div:1.0 div:1.0 log add:1.0 log mul add neg add:0.0,1.0 lt '
        'convert_element_type:-inf broadcast_in_dim select_n'),
    'scipy.stats.pareto.cdf': 'sub:0.0 div:1.0 neg pow sub:1.0 add:0.0,1.0 lt broadcast_in_dim:0.0 select_n',
    'scipy.stats.pareto.logcdf': (
        'sub:0.0 div:1.0 neg pow neg log1p add:0.0,1.0 lt convert_element_type:-inf '
        'broadcast_in_dim select_n'),
    'scipy.stats.pareto.sf': 'sub:0.0 div:1.0 log mul neg add:0.0,1.0 lt broadcast_in_dim:0.0 select_n exp',
    'scipy.stats.pareto.logsf': 'sub:0.0 div:1.0 log mul neg add:0.0,1.0 lt broadcast_in_dim:0.0 select_n',
    'scipy.stats.pareto.ppf': (
        'sub:1.0 div:1.0 neg pow mul:1.0 add:0.0 ne lt:0.0 or gt:1.0 or '
        'convert_element_type:nan broadcast_in_dim select_n'),
    'scipy.stats.gennorm.logpdf': 'mul:0.5 log div:1.0 lgamma sub abs pow sub',
    'scipy.stats.gennorm.cdf': 'sign div:1.0 abs pow igamma mul add:1.0 mul:0.5',
    'scipy.stats.vonmises.logpdf': (
        'gt:0.0 cos sub:1.0 mul bessel_i0e mul:6.2831854820251465 log sub '
        'convert_element_type:nan broadcast_in_dim select_n'),
    'scipy.stats.wrapcauchy.logpdf': (
        'gt:0.0 lt:1.0 and ge:0.0 le:6.2831854820251465 and mul sub:1.0 log '
        'log:6.2831854820251465 convert_element_type sub mul add:1.0 mul:2.0 cos mul sub '
        'log sub convert_element_type:-inf broadcast_in_dim select_n '
        'convert_element_type:nan broadcast_in_dim select_n'),
}


def test_expected_covers_cases():
    assert sorted(EXPECTED) == sorted(path for path, _ in CASES)


@pytest.mark.parametrize("path,spec", CASES, ids=[c[0] for c in CASES])
def test_primitive_sequence_is_jaxs(path, spec):
    args = make_args(spec)
    got = flatten(jaxlite.make_jaxpr(resolve(jaxlite, path))(*args))
    assert " ".join(got) == EXPECTED[path]


@pytest.mark.parametrize("path,spec", CASES, ids=[c[0] for c in CASES])
def test_expected_is_live_jax(path, spec):
    jax = pytest.importorskip("jax")
    pytest.importorskip("jax.scipy.special")
    pytest.importorskip("jax.scipy.stats")
    args = make_args(spec)
    assert " ".join(flatten(jax.make_jaxpr(resolve(jax, path))(*args))) == \
        EXPECTED[path]


# ------------------------------------------------------------- values vs SciPy / NumPy

_rng = np.random.default_rng(0)
_N = 1000
_X = np.concatenate([_rng.uniform(-12, 12, _N - 8),
                     [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 11.9, -11.9]]).astype(np.float32)
_Y = _rng.uniform(-6, 6, _N).astype(np.float32)
_POS = _rng.uniform(0.05, 40, _N).astype(np.float32)
_POS2 = _rng.uniform(0.05, 40, _N).astype(np.float32)
_P = np.concatenate([_rng.uniform(0, 1, _N - 6), [0.0, 1.0, 1e-30, 1e-10, 0.5,
                                                  1 - 2 ** -20]]).astype(np.float32)
_K = _rng.integers(0, 12, _N).astype(np.float32)


def _f64(*a):
    return [np.asarray(v, np.float64) for v in a]


VALUE_CASES = [
    # (path, args, reference on float64, rtol, atol)
    ("numpy.log10", (_POS,), np.log10, 1e-6, 1e-7),
    ("numpy.log2", (_POS,), np.log2, 1e-6, 1e-7),
    ("numpy.hypot", (_X, _Y), np.hypot, 1e-6, 0),
    ("numpy.heaviside", (np.append(_X[:-1], np.nan).astype(np.float32), _Y),
     np.heaviside, 0, 0),
    # (-0.0's spacing is JAX's -smallest subnormal, NumPy's +)
    ("numpy.spacing", (_X,), lambda x: np.where(
        x == 0, np.copysign(np.float32(2 ** -149), x), np.spacing(x.astype(np.float32))),
     0, 0),
    ("scipy.special.ndtr", (_X,), ss.ndtr, 1e-5, 1e-7),
    ("scipy.special.log_ndtr", (_X * 3,), ss.log_ndtr, 1e-5, 1e-6),
    ("scipy.special.ndtri", (_P,), ss.ndtri, 1e-5, 1e-6),
    ("scipy.special.xlogy", (_X, _POS), ss.xlogy, 1e-6, 1e-6),
    ("scipy.special.xlog1py", (_X, _P), ss.xlog1py, 1e-6, 1e-6),
    ("scipy.special.entr", (_X,), ss.entr, 1e-6, 1e-6),
    ("scipy.special.gamma", (_X / 2,), ss.gamma, 1e-5, 1e-7),
    ("scipy.special.gammasgn", (_X / 2,), ss.gammasgn, 0, 0),
    ("scipy.special.betaln", (_POS, _POS2), ss.betaln, 1e-5, 1e-5),
    ("scipy.special.logit", (_P,), ss.logit, 1e-5, 1e-6),
    ("scipy.special.loggamma", (_X,), lambda x: np.where(x > 0, ss.loggamma(x), np.nan),
     1e-5, 1e-6),
    ("scipy.special.factorial", (_X / 2,), ss.factorial, 1e-5, 0),
    ("scipy.special.comb", (_POS, _POS2 / 2), ss.comb, 1e-4, 0),
    ("scipy.special.beta", (_POS / 4, _POS2 / 4), ss.beta, 1e-4, 1e-30),
    ("scipy.special.boxcox", (_POS, _Y / 3), ss.boxcox, 1e-5, 1e-6),
    ("scipy.special.rel_entr", (_P, _POS), ss.rel_entr, 1e-5, 1e-6),
    ("scipy.special.kl_div", (_P, _POS), ss.kl_div, 1e-5, 1e-5),
    ("nn.sparse_plus", (_X / 6,),
     lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)), 1e-6, 1e-7),
    ("scipy.stats.norm.logpdf", (_X, 0.3, 1.7), sst.norm.logpdf, 1e-6, 1e-6),
    ("scipy.stats.norm.cdf", (_X, 0.3, 1.7), sst.norm.cdf, 1e-5, 1e-7),
    ("scipy.stats.norm.logcdf", (_X, 0.3, 1.7), sst.norm.logcdf, 1e-5, 1e-6),
    ("scipy.stats.norm.sf", (_X, 0.3, 1.7), sst.norm.sf, 1e-5, 1e-7),
    ("scipy.stats.norm.logsf", (_X, 0.3, 1.7), sst.norm.logsf, 1e-5, 1e-6),
    ("scipy.stats.norm.ppf", (_P[:-6], 0.3, 1.7), sst.norm.ppf, 1e-5, 1e-6),
    ("scipy.stats.norm.isf", (_P[:-6], 0.3, 1.7), sst.norm.isf, 1e-5, 1e-6),
    ("scipy.stats.t.logpdf", (_X, 3.5, 0.3, 1.7), sst.t.logpdf, 1e-5, 1e-6),
    ("scipy.stats.gamma.logpdf", (_POS, 2.5, 0.1, 1.5), sst.gamma.logpdf, 1e-5, 1e-5),
    ("scipy.stats.gamma.cdf", (_POS, 2.5, 0.1, 1.5), sst.gamma.cdf, 1e-4, 1e-6),
    ("scipy.stats.gamma.sf", (_POS, 2.5, 0.1, 1.5), sst.gamma.sf, 1e-4, 1e-6),
    ("scipy.stats.beta.logpdf", (_P[:-6], 2.0, 3.5), sst.beta.logpdf, 1e-5, 1e-5),
    ("scipy.stats.beta.cdf", (_P, 2.0, 3.5), sst.beta.cdf, 1e-4, 1e-6),
    ("scipy.stats.beta.sf", (_P, 2.0, 3.5), sst.beta.sf, 1e-4, 1e-6),
    ("scipy.stats.chi2.logpdf", (_POS, 3.0), sst.chi2.logpdf, 1e-5, 1e-5),
    ("scipy.stats.chi2.cdf", (_POS, 3.0), sst.chi2.cdf, 1e-4, 1e-6),
    ("scipy.stats.chi2.sf", (_POS, 3.0), sst.chi2.sf, 1e-4, 1e-6),
    ("scipy.stats.expon.logpdf", (_X, 0.1, 2.0), sst.expon.logpdf, 1e-6, 1e-6),
    ("scipy.stats.expon.cdf", (_X, 0.1, 2.0), sst.expon.cdf, 1e-5, 1e-7),
    ("scipy.stats.expon.sf", (_X, 0.1, 2.0), sst.expon.sf, 1e-5, 1e-7),
    ("scipy.stats.expon.ppf", (_P[:-6], 0.1, 2.0), sst.expon.ppf, 1e-5, 1e-6),
    ("scipy.stats.logistic.logpdf", (_X, 0.3, 1.7), sst.logistic.logpdf, 1e-5, 1e-6),
    ("scipy.stats.logistic.cdf", (_X, 0.3, 1.7), sst.logistic.cdf, 1e-5, 1e-7),
    ("scipy.stats.logistic.ppf", (_P[:-6], 0.3, 1.7), sst.logistic.ppf, 1e-5, 1e-5),
    ("scipy.stats.laplace.logpdf", (_X, 0.3, 1.7), sst.laplace.logpdf, 1e-6, 1e-6),
    ("scipy.stats.laplace.cdf", (_X, 0.3, 1.7), sst.laplace.cdf, 1e-5, 1e-7),
    ("scipy.stats.cauchy.logpdf", (_X, 0.3, 1.7), sst.cauchy.logpdf, 1e-6, 1e-6),
    ("scipy.stats.cauchy.cdf", (_X, 0.3, 1.7), sst.cauchy.cdf, 1e-5, 1e-7),
    ("scipy.stats.cauchy.ppf", (_P[:-6], 0.3, 1.7), sst.cauchy.ppf, 1e-4, 1e-5),
    ("scipy.stats.uniform.logpdf", (_X, -1.0, 3.0), sst.uniform.logpdf, 1e-6, 0),
    ("scipy.stats.uniform.cdf", (_X, -1.0, 3.0), sst.uniform.cdf, 1e-6, 1e-7),
    ("scipy.stats.poisson.logpmf", (_K, 3.5), sst.poisson.logpmf, 1e-5, 1e-5),
    ("scipy.stats.poisson.cdf", (_K, 3.5), sst.poisson.cdf, 1e-4, 1e-6),
    ("scipy.stats.binom.logpmf", (_K, 11.0, 0.3), sst.binom.logpmf, 1e-5, 1e-5),
    ("scipy.stats.geom.logpmf", (_K, 0.3), sst.geom.logpmf, 1e-5, 1e-5),
    ("scipy.stats.nbinom.logpmf", (_K, 5.0, 0.4), sst.nbinom.logpmf, 1e-5, 1e-5),
    ("scipy.stats.bernoulli.logpmf", (np.minimum(_K, 1), 0.3), sst.bernoulli.logpmf, 1e-6,
     1e-6),
    ("scipy.stats.betabinom.logpmf", (_K, 11.0, 2.0, 3.5), sst.betabinom.logpmf, 1e-5,
     1e-5),
    ("scipy.stats.pareto.logpdf", (_POS, 2.5), sst.pareto.logpdf, 1e-5, 1e-6),
    ("scipy.stats.pareto.cdf", (_POS, 2.5), sst.pareto.cdf, 1e-5, 1e-6),
    ("scipy.stats.pareto.logsf", (_POS, 2.5), sst.pareto.logsf, 1e-5, 1e-6),
    ("scipy.stats.pareto.ppf", (_P[:-6], 2.5), sst.pareto.ppf, 1e-4, 1e-6),
    ("scipy.stats.gennorm.logpdf", (_X / 3, 1.5), sst.gennorm.logpdf, 1e-5, 1e-5),
    ("scipy.stats.gennorm.cdf", (_X / 3, 1.5), sst.gennorm.cdf, 1e-4, 1e-6),
    ("scipy.stats.vonmises.logpdf", (_X / 4, 2.0), sst.vonmises.logpdf, 1e-5, 1e-5),
    ("scipy.stats.wrapcauchy.logpdf", (_POS / 7, 0.4), sst.wrapcauchy.logpdf, 1e-5, 1e-5),
    ("scipy.stats.truncnorm.logpdf", (_X / 4, -1.0, 1.5), sst.truncnorm.logpdf, 1e-5, 1e-5),
    ("scipy.stats.truncnorm.cdf", (_X / 4, -1.0, 1.5), sst.truncnorm.cdf, 1e-4, 1e-6),
    ("scipy.stats.truncnorm.logsf", (_X / 4, -1.0, 1.5), sst.truncnorm.logsf, 1e-4, 1e-5),
]


@pytest.mark.parametrize("path,args,ref,rtol,atol", VALUE_CASES,
                         ids=[c[0] for c in VALUE_CASES])
def test_values_vs_scipy(path, args, ref, rtol, atol):
    got = np.asarray(resolve(jaxlite, path)(*args))
    assert got.dtype == np.float32 or got.dtype == np.bool_
    with np.errstate(all="ignore"):
        want = ref(*_f64(*args))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol)


def test_modf_and_signbit_vs_numpy():
    frac, whole = (np.asarray(v) for v in jaxlite.numpy.modf(_X))
    want_frac, want_whole = np.modf(_X)
    np.testing.assert_array_equal(whole, want_whole)
    np.testing.assert_array_equal(frac, want_frac)
    x = np.append(_X, [np.inf, -np.inf, np.nan, -np.nan]).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(jaxlite.numpy.signbit(x)), np.signbit(x))


def test_dirichlet_and_multivariate_normal_vs_scipy():
    alpha = np.array([1.5, 2.0, 3.5], np.float32)
    x = _rng.dirichlet(alpha, 200).astype(np.float32)        # (200, 3)
    got = np.asarray(jaxlite.scipy.stats.dirichlet.logpdf(x.T, alpha))  # components first
    x64 = x.T.astype(np.float64)
    want = sst.dirichlet.logpdf(x64 / x64.sum(0), alpha.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    cov = _ARGS["cov"]
    mean = np.array([0.3, -0.2, 1.0], np.float32)
    pts = _rng.normal(size=(200, 3)).astype(np.float32)
    got = np.asarray(jaxlite.scipy.stats.multivariate_normal.logpdf(pts, mean, cov))
    want = sst.multivariate_normal.logpdf(pts, mean, cov)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
