"""A traced graph compiled into one straight-line NumPy function
(`mt.function(jit_compile=True)`): `compiler` writes the program, `program` runs
it, and what its lines call for the rules' zero-times-inf masks
(`zero_times_inf`) and a Jacobian's one-hot seed (`jacobian_seeds`).
"""
