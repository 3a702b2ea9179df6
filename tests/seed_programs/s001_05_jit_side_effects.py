# Seed 001, "Side Effects in a jit Context" and "JITting State": print runs only while
# tracing; static self is hashed by identity, so a new Counter recompiles.
# compare: exact
import functools

import jax


def print_hello():
    print('Hello!')  # Side effect!


jax.jit(print_hello)()

jit_print_hello = jax.jit(print_hello)
jit_print_hello()
jit_print_hello()
print('... Hello? :(')


class Counter:
    count = 0

    @functools.partial(jax.jit, static_argnums=(0,))
    def inc(self):
        self.count += 1


a = Counter()
print(a.count)
a.inc()
print(a.count)
a.inc()
print(a.count)

a = Counter()
print(a.count)
a.inc()
print(a.count)
a.inc()
print(a.count)
