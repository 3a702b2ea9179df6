"""jax.scipy.signal: convolve/correlate (1-d, n-d, 2-d), fftconvolve, detrend, stft, istft,
csd and welch.

Every case of CASES runs on jaxlite and, where it is installed, on JAX 0.10.2: same output
structure, shapes, dtypes, weak types, values (or the same exception class), and the same
warnings. Without JAX the values are checked against scipy.signal, gradients against finite
differences (check_grads), jit against eager and vmap against a Python loop."""
import warnings

import numpy as np
import pytest
import scipy.signal as ss

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy.signal as S
from jaxlite._src.config import config
from jaxlite.test_util import check_grads
from jax_case_compare import close, compare, run_expr, same_public_api, under_x64

RS = np.random.RandomState(0)
A5 = RS.randn(5).astype(np.float32)
B3 = RS.randn(3).astype(np.float32)
B2 = RS.randn(2).astype(np.float32)
M34 = RS.randn(3, 4).astype(np.float32)
M56 = RS.randn(5, 6).astype(np.float32)
K22 = RS.randn(2, 2).astype(np.float32)
K23 = RS.randn(2, 3).astype(np.float32)
K25 = RS.randn(2, 5).astype(np.float32)
C5 = (RS.randn(5) + 1j * RS.randn(5)).astype(np.complex64)
C3 = (RS.randn(3) + 1j * RS.randn(3)).astype(np.complex64)
C22 = (RS.randn(2, 2) + 1j * RS.randn(2, 2)).astype(np.complex64)
C34 = (RS.randn(3, 4) + 1j * RS.randn(3, 4)).astype(np.complex64)
I5 = np.arange(5, dtype=np.int32)
I3 = np.array([1, -2, 3], np.int32)
X300 = RS.randn(300).astype(np.float32)
Y300 = RS.randn(300).astype(np.float32)
X2D = RS.randn(3, 100).astype(np.float32)
XT = RS.randn(100, 3).astype(np.float32)
X64 = RS.randn(300)
_, _, Z64 = ss.stft(X300, nperseg=64)
Z64 = Z64.astype(np.complex64)
_, _, ZTWO = ss.stft(X300[:120], nperseg=20, return_onesided=False)
ZTWO = ZTWO.astype(np.complex64)
Z3 = RS.randn(4, 9, 5, 20).astype(np.float32)
ZR = (RS.randn(33, 20) + 1j * RS.randn(33, 20)).astype(np.complex64)
NAMES = {k: v for k, v in globals().items() if isinstance(v, np.ndarray)}

CASES = [
    # convolve / correlate, direct
    "S.convolve(A5, B3)", "S.convolve(A5, B3, mode='same')", "S.convolve(A5, B3, mode='valid')",
    "S.convolve(B3, A5, mode='same')", "S.convolve(B3, A5, mode='valid')",
    "S.convolve(B2, A5, mode='same')", "S.convolve(A5, B2, mode='same')",
    "S.convolve(A5, B3, method='direct')", "S.convolve(A5, B3, precision='highest')",
    "S.convolve(M34, K22)", "S.convolve(M34, K22, mode='same')",
    "S.convolve(M34, K22, mode='valid')", "S.convolve(K23, M56, mode='same')",
    "S.convolve(K23, M56, mode='valid')", "S.convolve(M34, K25)", "S.convolve(M34, B3)",
    "S.convolve(np.zeros(0, np.float32), B3)", "S.convolve(np.zeros(0, np.float32), M34)",
    "S.convolve(A5, B3, mode='bad')", "S.convolve(A5, B3, mode='bad', method='bad')",
    "S.convolve(A5, B3, method='bad')", "S.convolve(np.zeros(0, np.float32), M34, mode='bad')",
    "S.convolve(A5, B3, precision='bad')", "S.convolve(I5, I3)", "S.convolve(I5 > 1, I3 > 0)",
    "S.convolve(C5, B3)", "S.convolve(C5, C3, mode='same')",
    "S.convolve(A5.astype(np.float16), B3.astype(np.float16))",
    "S.convolve(A5.astype(np.float16), B3)",
    "S.convolve(jnp.arange(5) * 1.0, jnp.arange(3) * 1.0)", "S.convolve(jnp.arange(5) * 1.0, B3)",
    "S.convolve(jnp.asarray(2.0), jnp.asarray(3.0))", "S.convolve(A5, B3, method='fft')",
    "S.convolve(A5, B3, mode='same', method='fft')",
    "S.convolve(M34, K25, mode='same', method='fft')",
    "S.convolve(A5, B3, mode='bad', method='fft')", "S.convolve(A5, M34, method='fft')",
    "S.correlate(A5, B3)", "S.correlate(A5, B3, mode='same')", "S.correlate(A5, B3, mode='valid')",
    "S.correlate(B2, A5, mode='same')", "S.correlate(B2, A5, mode='valid')", "S.correlate(C5, C3)",
    "S.correlate(C3, C5, mode='valid')", "S.correlate(C34, C22, mode='same')",
    "S.correlate(C22, C34, mode='valid')", "S.correlate(A5, B3, method='fft')",
    "S.correlate(B2, A5, mode='valid', method='fft')",
    "S.correlate(C5, C3, mode='same', method='fft')", "S.correlate(M34, K22, mode='same')",
    "S.correlate(A5, B3, mode='bad', method='fft')",
    "S.correlate(jnp.asarray(2.0), jnp.asarray(3.0 + 1j))",
    # 2-d
    "S.convolve2d(M34, K22)", "S.convolve2d(M34, K22, mode='same')",
    "S.convolve2d(M34, K22, mode='valid')", "S.convolve2d(K22, M34, mode='valid')",
    "S.convolve2d(K23, M56, mode='same')", "S.convolve2d(C34, C22)",
    "S.convolve2d(M34, K25, mode='valid')", "S.convolve2d(A5, B3)",
    "S.convolve2d(M34, K22, boundary='wrap')", "S.convolve2d(M34, K22, fillvalue=1)",
    "S.convolve2d(M34, K22, boundary='fill', fillvalue=0.0)",
    "S.convolve2d(A5, B3, mode='bad', boundary='symm')", "S.convolve2d(M34, K22, mode='bad')",
    "S.convolve2d(I5.reshape(1, 5), I3.reshape(1, 3))",
    "S.convolve2d(jnp.ones((3, 3)) * jnp.float32(1), jnp.arange(4).reshape(2, 2) * 1.0)",
    "S.convolve2d(jnp.arange(9).reshape(3, 3) * 1.0, jnp.arange(4).reshape(2, 2) * 1.0)",
    "S.correlate2d(M34, K22)", "S.correlate2d(M34, K22, mode='same')",
    "S.correlate2d(M56, K23, mode='same')", "S.correlate2d(K23, M56, mode='same')",
    "S.correlate2d(M34, K22, mode='valid')", "S.correlate2d(C22, C34, mode='valid')",
    "S.correlate2d(C22, C34, mode='same')", "S.correlate2d(C34, C22, mode='valid')",
    "S.correlate2d(C34, C34, mode='valid')", "S.correlate2d(A5, B3)",
    "S.correlate2d(M34, K22, boundary='symm')", "S.correlate2d(M34, K25)",
    "S.correlate2d(M34, K22, mode='bad')",
    # fftconvolve
    "S.fftconvolve(A5, B3)", "S.fftconvolve(A5, B3, mode='same')",
    "S.fftconvolve(A5, B3, mode='valid')", "S.fftconvolve(B3, A5, mode='valid')",
    "S.fftconvolve(B2, A5, mode='same')", "S.fftconvolve(M34, K25)",
    "S.fftconvolve(M34, K25, mode='same')", "S.fftconvolve(M34, K25, mode='valid')",
    "S.fftconvolve(K23, M56, mode='valid')", "S.fftconvolve(C5, B3)", "S.fftconvolve(C34, C22)",
    "S.fftconvolve(I5, I3)", "S.fftconvolve(A5.astype(np.float16), B3.astype(np.float16))",
    "S.fftconvolve(A5.astype(np.float16), B3)", "S.fftconvolve(2.0, 3.0)",
    "S.fftconvolve(jnp.arange(5) * 1.0, jnp.arange(3) * 1.0)",
    "S.fftconvolve(np.zeros(0, np.float32), B2)", "S.fftconvolve(A5, M34)",
    "S.fftconvolve(A5, B3, mode='bad')", "S.fftconvolve(B3, M34, mode='bad')",
    "S.fftconvolve(M34, M34[:, :2], axes=(1,))", "S.fftconvolve(M34, M34[:, :2], axes=1)",
    "S.fftconvolve(M34, M34[:, :2], axes=(-1,), mode='same')",
    "S.fftconvolve(M34, M34[:, :2], axes=(1,), mode='valid')",
    "S.fftconvolve(M34, M34[:1, :2], axes=(1,))", "S.fftconvolve(M34, K22, axes=(0,))",
    "S.fftconvolve(M34, M34, axes=[])", "S.fftconvolve(M34, K22, axes=())",
    "S.fftconvolve(M34, M34, axes=(0, 1, 1))", "S.fftconvolve(M34, M34, axes=(5,))",
    "S.fftconvolve(M34, M34, axes=(1.0,))", "S.fftconvolve([1.0, 2.0], [1.0])",
    # detrend
    "S.detrend(X300)", "S.detrend(X300, type='constant')", "S.detrend(X300, type='bad')",
    "S.detrend(X300, bp=[10, 50])", "S.detrend(X300, bp=np.array([50, 10, 10]))",
    "S.detrend(X300, bp=300)", "S.detrend(X300, bp=[10, 500])", "S.detrend(X300, bp=[-1])",
    "S.detrend(X300, bp=jnp.asarray([20]))", "S.detrend(X300, overwrite_data=True)",
    "S.detrend(X300, type='bad', overwrite_data=False)", "S.detrend(X2D, axis=0)",
    "S.detrend(X2D, axis=0, type='constant')", "S.detrend(X2D, axis=-2)", "S.detrend(X2D, axis=2)",
    "S.detrend(X2D, axis=-3)", "S.detrend(X2D[:, :1])", "S.detrend(I5)", "S.detrend(C5)",
    "S.detrend(C5, type='constant')", "S.detrend(jnp.arange(6) * 1.0)",
    "S.detrend(jnp.arange(6) * 1.0, type='constant')", "S.detrend(jnp.arange(6) * 1j)",
    "S.detrend([1.0, 2.0, 4.0])", "S.detrend(3.0)", "S.detrend(jnp.asarray(3.0))",
    "S.detrend(A5.astype(np.float16))", "S.detrend(A5.astype(np.float16), type='constant')",
    "S.detrend(np.array([1.0, 2, 4, 3, 5], np.float32), bp=[4, 1])",
    "S.detrend(np.array([1.0, 2, 4, 3, 5], np.float32), bp=[5])",
    # stft
    "S.stft(X300)", "S.stft(X300, nperseg=64)", "S.stft(X300, nperseg=64, window='hamming')",
    "S.stft(X300, nperseg=64, window=('tukey', 0.3))",
    "S.stft(X300, nperseg=64, window=np.ones(64))",
    "S.stft(X300, nperseg=64, window=jnp.ones(64))",
    "S.stft(X300, nperseg=64, window=np.ones(32))", "S.stft(X300, nperseg=64, window='badwin')",
    "S.stft(X300, nperseg=64, window='kaiser')", "S.stft(X300, nperseg=64, window=('bad', 1))",
    "S.stft(X300, nperseg=64, window=np.ones((8, 8)))", "S.stft(X300, nperseg=64, noverlap=64)",
    "S.stft(X300, nperseg=64, noverlap=10)", "S.stft(X300, nperseg=64, noverlap=10.0)",
    "S.stft(X300, nperseg=64.0)", "S.stft(X300, nperseg=64, nfft=32)",
    "S.stft(X300, nperseg=64, nfft=100)", "S.stft(X300, nperseg=64, nfft=101)",
    "S.stft(X300, nperseg=0)", "S.stft(X300, nperseg=-3)", "S.stft(X300, nperseg=400)",
    "S.stft(X300[:10])", "S.stft(X300[:10], nperseg=None)",
    "S.stft(X300, nperseg=64, detrend=True)", "S.stft(X300, nperseg=64, detrend='linear')",
    "S.stft(X300, nperseg=64, detrend='constant')", "S.stft(X300, nperseg=64, detrend='bad')",
    "S.stft(X300, nperseg=64, return_onesided=False)", "S.stft(X300, nperseg=64, boundary=None)",
    "S.stft(X300, nperseg=64, boundary='even')", "S.stft(X300, nperseg=64, boundary='odd')",
    "S.stft(X300, nperseg=64, boundary='constant')", "S.stft(X300, nperseg=64, boundary='bad')",
    "S.stft(X300, nperseg=64, padded=False)",
    "S.stft(X300, nperseg=64, boundary=None, padded=False)", "S.stft(X300, nperseg=64, fs=10)",
    "S.stft(X300, nperseg=64, fs=jnp.float32(10))",
    "S.stft(I5 * np.ones((60, 1), np.int32), nperseg=4, axis=0)",
    "S.stft(X300.astype(np.float16), nperseg=64)",
    "S.stft(C5 * np.ones((20, 1)), nperseg=8, axis=0)", "S.stft(X300 * 1j, nperseg=64)",
    "S.stft(X2D, nperseg=64)", "S.stft(X2D, nperseg=64, axis=0)", "S.stft(XT, nperseg=64, axis=0)",
    "S.stft(XT, nperseg=64, axis=-2)", "S.stft(XT, nperseg=64, axis=2)",
    "S.stft(jnp.float32(3), nperseg=64)", "S.stft(np.zeros((3, 0), np.float32), nperseg=64)",
    "S.stft(jnp.arange(300) * 1.0, nperseg=64)", "S.stft(X300, nperseg=64, window=None)",
    "S.stft(X300, window=np.ones(20))", "S.stft(X300, window=np.ones(20), nperseg=20)",
    "S.stft(X300[:5], nperseg=1)", "S.stft(X300[:1], nperseg=4)",
    # welch / csd
    "S.welch(X300)", "S.welch(X300, nperseg=64)", "S.welch(X300, nperseg=64, average='median')",
    "S.welch(X300, nperseg=64, scaling='spectrum')", "S.welch(X300, nperseg=64, scaling='bad')",
    "S.welch(X300, nperseg=64, detrend=False)", "S.welch(X300, nperseg=64, detrend='linear')",
    "S.welch(X300, nperseg=64, detrend='bad')", "S.welch(X300, nperseg=64, return_onesided=False)",
    "S.welch(X300 * 1j, nperseg=64)", "S.welch(X2D[:2] * (1 + 2j), nperseg=64, average='median')",
    "S.welch(I5 * np.ones((60, 1), np.int32), nperseg=8, axis=0)",
    "S.welch(np.zeros(0, np.float32))", "S.welch(X300[:10])",
    "S.welch(X300, nperseg=64, window=np.ones(64))", "S.welch(X300, window=np.ones(64))",
    "S.welch(X300[:10], window=np.ones(20))", "S.welch(X300, nperseg=64, noverlap=0)",
    "S.welch(X300, nperseg=64, nfft=128)", "S.welch(X300, nperseg=64, nfft=101)",
    "S.welch(X300, nperseg=64, fs=100)", "S.welch(X300, nperseg=64, fs=jnp.arange(3.0))",
    "S.welch(X2D, nperseg=64, axis=0)", "S.welch(XT, nperseg=64, axis=0)",
    "S.welch(X2D, nperseg=16, average='median')", "S.welch(X300, nperseg=64, average='bad')",
    "S.welch(X300[:70], nperseg=64)", "S.welch(jnp.arange(300) * 1.0, nperseg=64)",
    "S.csd(X300, Y300, nperseg=64)", "S.csd(X300, None, nperseg=64)",
    "S.csd(X300, Y300[:200], nperseg=64)", "S.csd(X300[:200], Y300, nperseg=64)",
    "S.csd(X2D, Y300[:100], nperseg=64)", "S.csd(X2D, Y300[:200].reshape(2, 100), nperseg=64)",
    "S.csd(X2D, Y300[:100].reshape(1, 100), nperseg=64)",
    "S.csd(X300[:100].reshape(1, 100), X2D, nperseg=64)",
    "S.csd(X300, Y300, nperseg=64, average='median')",
    "S.csd(X300, Y300, nperseg=64, average='bad')", "S.csd(X300 * 1j, Y300, nperseg=64)",
    "S.csd(C5 * np.ones((20, 1)), XT[:20, :1], nperseg=8, axis=0)",
    "S.csd(np.zeros(0, np.float32), Y300, nperseg=64)",
    "S.csd(X300, np.zeros(0, np.float32), nperseg=64)",
    "S.csd(X300, Y300, nperseg=64, scaling='spectrum', return_onesided=False)",
    "S.csd(X300, Y300.astype(np.float16), nperseg=64)", "S.csd(I5, I3, nperseg=2)",
    "S.csd(X2D, Y300[:300].reshape(3, 100), nperseg=32, axis=-1, nfft=33, detrend='linear')",
    # istft
    "S.istft(Z64)", "S.istft(Z64, nperseg=64)", "S.istft(Z64, nperseg=64, input_onesided=False)",
    "S.istft(Z64, nperseg=62)", "S.istft(Z64, nperseg=70)", "S.istft(Z64, nperseg=64, nfft=32)",
    "S.istft(Z64, nperseg=32, nfft=64)", "S.istft(Z64, nperseg=64, nfft=66)",
    "S.istft(Z64, nperseg=64, noverlap=64)", "S.istft(Z64, nperseg=64, noverlap=16)",
    "S.istft(Z64, nperseg=64, noverlap=-1)", "S.istft(Z64, boundary=False)",
    "S.istft(Z64, fs=10.0)", "S.istft(Z64, nfft=0)", "S.istft(Z64, fs=jnp.float32(2.0))",
    "S.istft(Z64, window='hamming')", "S.istft(Z64, window=np.ones(64))",
    "S.istft(Z64, window=np.ones(32))", "S.istft(Z64, window=np.ones((64, 1)))",
    "S.istft(Z64, window='badwin')", "S.istft(Z64[None], time_axis=-1, freq_axis=-2)",
    "S.istft(Z64.T, time_axis=0, freq_axis=1)", "S.istft(ZR, time_axis=0, freq_axis=1)",
    "S.istft(Z64, time_axis=1, freq_axis=1)", "S.istft(Z64, time_axis=-1, freq_axis=0)",
    "S.istft(Z64[0])", "S.istft(Z64.real)", "S.istft(Z64.real.astype(np.int32))",
    "S.istft(Z64.astype(np.complex128))", "S.istft(Z64.real.astype(np.float16))",
    "S.istft(ZTWO, input_onesided=False)", "S.istft(ZTWO, input_onesided=False, nperseg=20)",
    "S.istft(Z64, time_axis=2)", "S.istft(Z64, freq_axis=-3)", "S.istft(Z64[:1])",
    "S.istft(Z64[:2])", "S.istft(Z64[:, :1])", "S.istft(jnp.asarray(Z64) * 1.0)",
    "S.istft(Z3, time_axis=1, freq_axis=0)", "S.istft(Z3, time_axis=3, freq_axis=1)",
    "S.istft(Z3, time_axis=1, freq_axis=3)", "S.istft(Z3, time_axis=0, freq_axis=2)",
    "S.istft(Z3, time_axis=2, freq_axis=0)", "S.istft(Z3, time_axis=-1, freq_axis=1)",
]

TRANSFORM_CASES = [
    "jax.grad(lambda a: S.convolve(a, B3, mode='same').sum())(A5)",
    "jax.grad(lambda b: (S.correlate(A5, b) ** 2).sum())(B3)",
    "jax.grad(lambda a: S.convolve2d(a, K22, mode='valid').sum())(M34)",
    "jax.grad(lambda a: (S.correlate2d(K22, a, mode='valid') ** 2).sum())(M34)",
    "jax.grad(lambda a: jnp.abs(S.correlate(C5, a, mode='same')).sum())(C3)",
    "jax.grad(lambda a: (S.fftconvolve(a, B3, mode='same') ** 2).sum())(A5)",
    "jax.grad(lambda a: S.fftconvolve(a, K25, axes=1).sum())(M34[:2])",
    "jax.grad(lambda a: S.detrend(a, bp=[100]).var())(X300)",
    "jax.grad(lambda a: S.detrend(a, type='constant')[3])(X300)",
    "jax.grad(lambda a: S.welch(a, nperseg=64)[1].sum())(X300)",
    "jax.grad(lambda a: S.welch(a, nperseg=64, average='median')[1].sum())(X300)",
    "jax.grad(lambda a: jnp.abs(S.stft(a, nperseg=64)[2]).sum())(X300)",
    "jax.grad(lambda a: S.csd(a, Y300, nperseg=64)[1].real.sum())(X300)",
    "jax.grad(lambda z: S.istft(z)[1].sum())(Z64)",
    "jax.vmap(lambda a: S.welch(a, nperseg=32)[1])(X2D)",
    "jax.vmap(lambda a: S.convolve(a, B3))(M34)",
    "jax.vmap(S.correlate2d, (0, None))(X2D.reshape(3, 10, 10), K22)",
    "jax.vmap(S.fftconvolve, (None, 0))(A5, M34)", "jax.vmap(S.detrend)(X2D)",
    "jax.vmap(lambda z: S.istft(z, nperseg=64))(np.stack([Z64, Z64 * 2]))",
    "jax.jit(lambda a: S.stft(a, nperseg=64))(X300)",
    "jax.jit(lambda a, fs: S.welch(a, fs=fs, nperseg=64))(X300, 3.0)",
    "jax.jit(lambda a: S.csd(a, a[::-1], nperseg=64, average='median'))(X300)",
    "jax.jit(lambda a: S.convolve(a, B3, mode='valid'))(A5)",
    "jax.jit(lambda b: S.detrend(X300, bp=b))(jnp.asarray([5]))",
    "jax.jit(lambda n: S.stft(X300, nperseg=n))(64)",
]

X64_CASES = [
    "S.stft(X64, nperseg=16)", "S.stft(X300, nperseg=16)",
    "S.stft(X64, nperseg=16, fs=jnp.float32(2))",
    "S.stft(I5 * np.ones((40, 1), np.int32), nperseg=8, axis=0)",
    "S.stft(np.arange(40), nperseg=8)", "S.welch(X64, nperseg=16)",
    "S.welch(np.arange(40), nperseg=8)", "S.csd(np.arange(40), X300[:40], nperseg=8)",
    "S.csd(X64, X300, nperseg=16)", "S.detrend(X64)", "S.detrend(I5)", "S.detrend(np.arange(7))",
    "S.detrend(X64, type='constant')", "S.convolve(X64[:5], B3)", "S.convolve(I5, I3)",
    "S.fftconvolve(X64[:5], B3)", "S.fftconvolve(np.arange(5), np.arange(3))",
    "S.convolve2d(X64[:6].reshape(2, 3), K22)", "S.istft(Z64.astype(np.complex128))",
    "S.istft(Z64.real.astype(np.int32))", "S.istft(Z64.real.astype(np.int64))",
    "S.istft(Z64.real.astype(np.float64))",
]

# Deliberate differences from JAX 0.10.2 (documented in the functions' docstrings/README):
# istft with an odd nperseg one longer than the default follows SciPy (JAX fails in a
# multiply); jaxlite raises nothing there.
DIFFERENT = {
    # SciPy's nfft = nperseg for an odd nperseg one longer than the default (JAX fails)
    "S.istft(ZR, nperseg=65)",
    # noverlap=0 means no overlap and nperseg=0 is an error, as in SciPy (JAX 0.10.2 takes
    # both as "use the default")
    "S.istft(Z64, nperseg=64, noverlap=0)", "S.istft(Z64, nperseg=0)",
    # a custom detrend function gets the segments with their samples last, as SciPy does
    # (JAX 0.10.2 hands it the segments transposed)
    "S.welch(X300, nperseg=64, detrend=lambda a: a - a.mean(axis=-1, keepdims=True))",
    "S.welch(XT, nperseg=32, axis=0, detrend=lambda a: a - a.mean(axis=-1, keepdims=True))",
}


def _env(mod_signal, mod_jnp):
    env = dict(NAMES)
    env.update(S=mod_signal, jnp=mod_jnp, np=np,
               jax=__import__("jax" if mod_signal.__name__.startswith("jax.") else "jaxlite"))
    return env


def _check_case(expr):
    rjax = pytest.importorskip("jax")
    import jax.numpy as rjnp
    import jax.scipy.signal as rsig
    want, want_w = run_expr(expr, _env(rsig, rjnp))
    got, got_w = run_expr(expr, _env(S, jnp))
    del rjax
    compare(got, want, expr)
    assert [c for c, _ in got_w] == [c for c, _ in want_w], f"{expr}: warnings {got_w} vs {want_w}"


@pytest.mark.parametrize("expr", CASES)
def test_vs_jax(expr):
    _check_case(expr)


@pytest.mark.parametrize("expr", sorted(DIFFERENT))
def test_deliberate_differences_follow_scipy(expr):
    """Where jaxlite deliberately differs from JAX 0.10.2 it matches SciPy."""
    if "nperseg=0" in expr:
        with pytest.raises(ValueError, match="nperseg must be a positive integer"):
            eval(expr, _env(S, jnp))
        return
    got = eval(expr, _env(S, jnp))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = eval(expr, _env(ss, np))
    for g, w in zip(got, want):
        close(g, w, 1e-4)


@pytest.mark.parametrize("expr", TRANSFORM_CASES)
def test_transforms_vs_jax(expr):
    _check_case(expr)


def test_names_and_signatures_vs_jax():
    pytest.importorskip("jax")
    import jax.scipy.signal as rsig
    same_public_api(S, rsig)


@pytest.mark.parametrize("expr", X64_CASES)
def test_vs_jax_x64(expr):
    under_x64(_check_case, expr)


SHAPE_PAIRS_1D = [(5, 3), (3, 5), (6, 2), (2, 6), (4, 4), (1, 3), (7, 1)]
SHAPE_PAIRS_2D = [((5, 6), (2, 3)), ((5, 6), (3, 4)), ((2, 2), (3, 4)), ((2, 3), (5, 5)),
                  ((4, 4), (4, 4)), ((6, 7), (4, 5)), ((3, 1), (2, 1))]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("cplx", [False, True])
def test_convolutions_vs_scipy(mode, cplx):
    rs = np.random.RandomState(1)

    def arr(shape):
        a = rs.randn(*shape)
        return a + 1j * rs.randn(*shape) if cplx else a

    with config.override("jax_enable_x64", True):
        for n1, n2 in SHAPE_PAIRS_1D:
            a, b = arr((n1,)), arr((n2,))
            for name in ("convolve", "correlate", "fftconvolve"):
                close(getattr(S, name)(a, b, mode=mode), getattr(ss, name)(a, b, mode=mode),
                       1e-10)
            close(S.correlate(a, b, mode=mode, method="fft"), ss.correlate(a, b, mode=mode),
                   1e-10)
        for s1, s2 in SHAPE_PAIRS_2D:
            a, b = arr(s1), arr(s2)
            for name in ("convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve"):
                close(getattr(S, name)(a, b, mode=mode), getattr(ss, name)(a, b, mode=mode),
                       1e-10)
        a, b = arr((4, 5, 6)), arr((2, 3, 2))
        for name in ("convolve", "correlate", "fftconvolve"):
            close(getattr(S, name)(a, b, mode=mode), getattr(ss, name)(a, b, mode=mode), 1e-10)
        a, b = arr((3, 8)), arr((3, 3))
        close(S.fftconvolve(a, b, mode=mode, axes=1), ss.fftconvolve(a, b, mode=mode, axes=1),
               1e-10)


def test_convolve_dtypes_and_scalars():
    assert S.convolve(I5, I3).dtype == np.float32
    assert S.convolve(A5.astype(np.float16), B3.astype(np.float16)).dtype == np.float16
    assert S.convolve(C5, B3).dtype == np.complex64
    out = S.convolve(jnp.arange(5) * 1.0, jnp.arange(3) * 1.0)
    assert out.weak_type and out.dtype == np.float32
    assert not S.fftconvolve(jnp.arange(5) * 1.0, jnp.arange(3) * 1.0).weak_type
    # Python scalars are 0-d arrays here (JAX 0.10.2 fails with an AttributeError)
    close(S.convolve(2.0, 3.0), 6.0)
    close(S.correlate(2.0, 3.0 + 1j), 6.0 - 2.0j)
    with pytest.raises(TypeError, match="ndarray or scalar"):
        S.convolve([1.0, 2.0], [1.0])


def test_convolution_errors():
    with pytest.raises(ValueError, match="same number of dimensions"):
        S.convolve(M34, B3)
    with pytest.raises(ValueError, match="smaller than the other in every dimension"):
        S.convolve(M34, K25)
    with pytest.raises(ValueError, match="zero-size"):
        S.convolve(np.zeros(0), B3)
    with pytest.raises(ValueError, match="mode must be one of"):
        S.correlate(A5, B3, mode="bad")
    with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
        S.convolve(A5, B3, method="overlap-add")
    with pytest.raises(NotImplementedError, match="boundary='fill', fillvalue=0"):
        S.convolve2d(M34, K22, boundary="wrap")
    with pytest.raises(NotImplementedError, match="correlate2d"):
        S.correlate2d(M34, K22, fillvalue=2)
    with pytest.raises(ValueError, match="2-dimensional"):
        S.convolve2d(A5, B3)
    with pytest.raises(ValueError, match="mapped axes must have same shape"):
        S.fftconvolve(M34, K22, axes=(0,))
    with pytest.raises(ValueError, match="at least as large as the other"):
        S.fftconvolve(M34, K25, mode="valid")
    with pytest.raises(ValueError, match="same dimensionality"):
        S.fftconvolve(A5, M34)


def test_convolutions_grad_jit_vmap():
    with config.override("jax_enable_x64", True):
        a, b = RS.randn(6), RS.randn(3)
        m, k = RS.randn(4, 5), RS.randn(2, 3)
        for mode in ("full", "same", "valid"):
            check_grads(lambda p, q: S.convolve(p, q, mode=mode), (a, b), order=2,
                        modes=("fwd", "rev"))
            check_grads(lambda p, q: S.correlate2d(p, q, mode=mode), (m, k), order=1,
                        modes=("fwd", "rev"))
            check_grads(lambda p, q: S.fftconvolve(p, q, mode=mode), (m, k), order=1,
                        modes=("fwd", "rev"))
    batch, kern = RS.randn(4, 7).astype(np.float32), RS.randn(3).astype(np.float32)
    for fn in (S.convolve, S.correlate, S.fftconvolve):
        got = jaxlite.vmap(lambda r: fn(r, kern, mode="same"))(batch)
        want = np.stack([np.asarray(fn(r, kern, mode="same")) for r in batch])
        close(got, want)
        close(jaxlite.jit(lambda r: fn(r, kern))(batch[0]), fn(batch[0], kern))
    imgs = RS.randn(3, 4, 5).astype(np.float32)
    got = jaxlite.vmap(S.convolve2d, in_axes=(0, None))(imgs, K22)
    close(got, np.stack([ss.convolve2d(x, K22) for x in imgs]), 1e-4)


def test_detrend_vs_scipy():
    with config.override("jax_enable_x64", True):
        x = RS.randn(4, 50)
        for kw in [{}, {"type": "constant"}, {"bp": [10, 30]}, {"bp": 25, "axis": -1},
                   {"axis": 0}, {"axis": 0, "bp": [1, 2]}, {"bp": [0, 50]}]:
            close(S.detrend(x, **kw), ss.detrend(x, **kw), 1e-10)
        xc = x + 1j * RS.randn(4, 50)
        close(S.detrend(xc, bp=[7]), ss.detrend(xc, bp=[7]), 1e-10)
        check_grads(lambda v: S.detrend(v, bp=[5, 20]), (x[0],), order=2, modes=("fwd", "rev"))
    with pytest.raises(ValueError, match="Breakpoints"):
        S.detrend(A5, bp=[6])
    with pytest.raises(ValueError, match="Trend type"):
        S.detrend(A5, type="quadratic")
    with pytest.raises(IndexError):
        S.detrend(A5, axis=1)
    with pytest.raises(NotImplementedError, match="overwrite_data"):
        S.detrend(A5, overwrite_data=False)
    assert S.detrend(np.zeros((3, 0), np.float32)).shape == (3, 0)
    assert S.detrend(I5).dtype == np.float32
    assert S.detrend(jnp.arange(6) * 1.0).weak_type
    assert not S.detrend(jnp.arange(6) * 1.0, type="constant").weak_type


SPECTRAL_KW = [{}, {"average": "median"}, {"scaling": "spectrum"}, {"detrend": "linear"},
               {"detrend": False}, {"return_onesided": False}, {"nfft": 101}, {"nfft": 100},
               {"fs": 7.0}, {"window": "boxcar", "noverlap": 0}, {"window": ("tukey", 0.3)},
               {"noverlap": 40}]


@pytest.mark.parametrize("kw", SPECTRAL_KW, ids=[str(k) for k in SPECTRAL_KW])
def test_welch_csd_vs_scipy(kw):
    with config.override("jax_enable_x64", True):
        x, y = RS.randn(2, 300), RS.randn(2, 300)
        f, p = S.welch(x, nperseg=64, **kw)
        f2, p2 = ss.welch(x, nperseg=64, **kw)
        close(f, f2, 1e-12)
        close(p, p2, 1e-10)
        f, p = S.csd(x, y, nperseg=64, **kw)
        f2, p2 = ss.csd(x, y, nperseg=64, **kw)
        close(f, f2, 1e-12)
        close(p, p2, 1e-10)
        f, p = S.welch(x.T, nperseg=64, axis=0, **kw)
        close(p, ss.welch(x.T, nperseg=64, axis=0, **kw)[1], 1e-10)


STFT_KW = [{}, {"boundary": "even"}, {"boundary": "odd"}, {"boundary": "constant"},
           {"boundary": None, "padded": False}, {"boundary": None}, {"detrend": "linear"},
           {"return_onesided": False}, {"nfft": 100}, {"fs": 3.0}, {"noverlap": 48},
           {"window": "hamming"}]


@pytest.mark.parametrize("kw", STFT_KW, ids=[str(k) for k in STFT_KW])
def test_stft_istft_vs_scipy(kw):
    with config.override("jax_enable_x64", True):
        x = RS.randn(2, 300)
        f, t, z = S.stft(x, nperseg=64, **kw)
        f2, t2, z2 = ss.stft(x, nperseg=64, **kw)
        close(f, f2, 1e-12)
        close(t, t2, 1e-12)
        close(z, z2, 1e-10)
        ikw = {k: v for k, v in kw.items() if k in ("nfft", "fs", "noverlap", "window")}
        ikw["input_onesided"] = kw.get("return_onesided", True)
        if "boundary" in kw:
            ikw["boundary"] = kw["boundary"] is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # SciPy's NOLA warning without boundary
            t3, x3 = S.istft(z2, nperseg=64, **ikw)
            t4, x4 = ss.istft(z2, nperseg=64, **ikw)
        close(t3, t4, 1e-12)
        close(x3, x4, 1e-10)
        if (kw.get("boundary", "zeros") is not None and kw.get("return_onesided", True)
                and "detrend" not in kw):
            close(x3[..., :300], x, 1e-10)          # perfect reconstruction


def test_istft_odd_nperseg_follows_scipy():
    t, x = S.istft(ZR, nperseg=65)
    t2, x2 = ss.istft(ZR, nperseg=65)
    close(x, x2, 1e-4)
    close(t, t2)


def test_spectral_warnings_and_errors():
    with pytest.warns(UserWarning, match="nperseg=256 is greater than input_length=10"):
        S.stft(X300[:10])
    with pytest.warns(UserWarning, match="switching to return_onesided=False"):
        S.welch(X300 * 1j, nperseg=64)
    with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
        S.welch(X300, nperseg=64, noverlap=64)
    with pytest.raises(ValueError, match="nfft must be greater than or equal to nperseg"):
        S.stft(X300, nperseg=64, nfft=32)
    with pytest.raises(ValueError, match="Invalid window name 'hanning'"):
        S.welch(X300, window="hanning")
    with pytest.raises(ValueError, match="must have parameters"):
        S.welch(X300, window="kaiser")
    with pytest.raises(ValueError, match="Unknown boundary option"):
        S.stft(X300, boundary="periodic")
    with pytest.raises(ValueError, match='average must be "median" or "mean"'):
        S.csd(X300, Y300, average="max")
    with pytest.raises(ValueError, match="same rank"):
        S.csd(X2D, Y300)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        S.csd(X2D, Y300[:200].reshape(2, 100))
    with pytest.raises(ValueError, match="at least 2d"):
        S.istft(Z64[0])
    with pytest.raises(ValueError, match="differing time and frequency axes"):
        S.istft(Z64, time_axis=0, freq_axis=0)
    with pytest.raises(ValueError, match=r"FFT length \(64\) must be longer than nperseg"):
        S.istft(Z64, nperseg=70)
    with pytest.raises(ValueError, match="window must have length of 64"):
        S.istft(Z64, window=np.ones(10))


def test_spectral_grad_jit_vmap():
    with config.override("jax_enable_x64", True):
        x, y = RS.randn(80), RS.randn(80)
        check_grads(lambda v: S.welch(v, nperseg=16)[1], (x,), order=1, modes=("fwd", "rev"))
        check_grads(lambda v: S.csd(v, y, nperseg=16, detrend="linear")[1], (x,), order=1,
                    modes=("fwd", "rev"))
        check_grads(lambda v: S.stft(v, nperseg=16)[2], (x,), order=1, modes=("fwd", "rev"))
        z = np.asarray(S.stft(x, nperseg=16)[2])
        check_grads(lambda v: S.istft(v, nperseg=16)[1], (z,), order=1, modes=("fwd", "rev"))
        check_grads(lambda v: S.welch(v, nperseg=16, average="median")[1], (x,), order=1,
                    modes=("rev",))
    batch = RS.randn(3, 120).astype(np.float32)
    got = jaxlite.vmap(lambda r: S.welch(r, nperseg=32)[1])(batch)
    close(got, np.stack([np.asarray(S.welch(r, nperseg=32)[1]) for r in batch]))
    got = jaxlite.vmap(lambda r: S.stft(r, nperseg=32)[2])(batch)
    close(got, S.stft(batch, nperseg=32)[2])
    zs = S.stft(batch, nperseg=32)[2]
    got = jaxlite.vmap(lambda z: S.istft(z, nperseg=32)[1])(zs)
    close(got, S.istft(zs, nperseg=32)[1])
    jitted = jaxlite.jit(lambda r: S.csd(r, r[::-1], nperseg=32, average="median"))(batch[0])
    close(jitted[1], S.csd(batch[0], batch[0][::-1], nperseg=32, average="median")[1])
    jitted = jaxlite.jit(lambda r, fs: S.stft(r, fs=fs, nperseg=32))(batch[0], 4.0)
    for g, w in zip(jitted, S.stft(batch[0], fs=4.0, nperseg=32)):
        close(g, w)
