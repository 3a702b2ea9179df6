# Seed 001, "grad How-To": higher-order grads, argnums, value_and_grad, has_aux.
# compare: exact
import jax


def expo_fn(x, y):
    return x**4 + 2**y + 3


x = 1.0
y = 2.0
grad_x_fn = jax.grad(expo_fn)  # 4x^3
grad2_x_fn = jax.grad(grad_x_fn)  # 12x^2
grad3_x_fn = jax.grad(grad2_x_fn)  # 24x
print([
    ['function', r'\partial{}expo_fn/\partial{}\(x\)'],
    ['grad_x', grad_x_fn(x, y).item()],
    ['grad2_x', grad2_x_fn(x, y).item()],
    ['grad3_x', grad3_x_fn(x, y).item()],
])

grad_y_fn = jax.grad(expo_fn, argnums=1)  # ln(y) * 2^y
grad_xy_fn = jax.grad(expo_fn, argnums=(0, 1))
print([
    ['function', 'result'],
    ['grad_y', grad_y_fn(x, y).item()],
    ['grad_xy', [g.item() for g in grad_xy_fn(x, y)]],
])

result_grad_fn = jax.value_and_grad(expo_fn)
result, grad = result_grad_fn(x, y)
print(repr(result), repr(grad))


def poly_fn_and_aux(x, y):
    aux_output = ({'y': y}, 1337)
    return x**4 + (y - 1)**2 + 3, aux_output


grad_aux_fn = jax.grad(poly_fn_and_aux, has_aux=True)
grad, aux = grad_aux_fn(x, y)
print(repr(grad), aux)

result_aux_grad_fn = jax.value_and_grad(poly_fn_and_aux, has_aux=True)
(result, aux), grad = result_aux_grad_fn(x, y)
print(repr(result), aux, repr(grad))
print(jax.grad(lambda x, y: jax.lax.stop_gradient(x) * y + x, argnums=(0, 1))(x, y))
