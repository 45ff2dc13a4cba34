"""Which entries of torch's op_db test_opinfo.py runs, and why not the others.

Generated from tests/scripts/opinfo_report.py's status lines (its first error per entry and
dtype), then kept by hand: SKIP (not run: eagergrad lacks the op, or torch's values are
arbitrary), NONDETERMINISTIC (random: tested statistically elsewhere), XFAIL (runs, and is
known to differ from torch: the first error seen; non-strict, so an entry that starts
passing shows as XPASS in the report to be removed from here), TOLERANCE (looser
comparisons, with the reason)."""

SKIP = {
    '__rdiv__':
        'missing in eagergrad: Tensor.__rdiv__',
    '_batch_norm_with_update':
        'missing in eagergrad: aten op aten._batch_norm_with_update',
    '_chunk_cat':
        'missing in eagergrad: _chunk_cat',
    '_native_batch_norm_legit':
        'missing in eagergrad: _native_batch_norm_legit',
    '_segment_reduce.lengths':
        'missing in eagergrad: _segment_reduce',
    '_segment_reduce.offsets':
        'missing in eagergrad: _segment_reduce',
    '_softmax_backward_data':
        'missing in eagergrad: aten op aten._softmax_backward_data',
    '_unsafe_masked_index':
        'missing in eagergrad: _unsafe_masked_index',
    '_unsafe_masked_index_put_accumulate':
        'missing in eagergrad: _unsafe_masked_index_put_accumulate',
    '_upsample_bilinear2d_aa':
        'missing in eagergrad: aten op aten._upsample_bilinear2d_aa',
    'alias_copy':
        'missing in eagergrad: alias_copy',
    'as_strided_copy':
        'missing in eagergrad: as_strided_copy',
    'as_strided_scatter':
        'missing in eagergrad: as_strided_scatter',
    'broadcast_shapes':
        'missing in eagergrad: broadcast_shapes',
    'corrcoef':
        'missing in eagergrad: corrcoef',
    'cov':
        'missing in eagergrad: cov',
    'diagonal_copy':
        'missing in eagergrad: diagonal_copy',
    'empty':
        'uninitialized memory: values are arbitrary in torch (shape/dtype tested in test_tensor...',
    'empty_like':
        'uninitialized memory: values are arbitrary in torch (shape/dtype tested in test_tensor...',
    'empty_permuted':
        'uninitialized memory: values are arbitrary in torch (shape/dtype tested in test_tensor...',
    'empty_strided':
        'uninitialized memory: values are arbitrary in torch (shape/dtype tested in test_tensor...',
    'expand_copy':
        'missing in eagergrad: expand_copy',
    'fill':
        'missing in eagergrad: fill',
    'gradient':
        'missing in eagergrad: gradient',
    'grid_sampler_3d':
        'missing in eagergrad: grid_sampler_3d',
    'hash_tensor':
        'missing in eagergrad: hash_tensor',
    'histogramdd':
        'missing in eagergrad: histogramdd',
    'isin':
        'missing in eagergrad: isin',
    'istft':
        'missing in eagergrad: istft',
    'jiterator_2inputs_2outputs':
        'missing in eagergrad: unknown torch callable <torch.cuda.jiterator._JittedFunction obj...',
    'jiterator_4inputs_with_extra_args':
        'missing in eagergrad: unknown torch callable <torch.cuda.jiterator._JittedFunction obj...',
    'jiterator_binary':
        'missing in eagergrad: unknown torch callable <torch.cuda.jiterator._JittedFunction obj...',
    'jiterator_binary_return_by_ref':
        'missing in eagergrad: unknown torch callable <torch.cuda.jiterator._JittedFunction obj...',
    'jiterator_unary':
        'missing in eagergrad: unknown torch callable <torch.cuda.jiterator._JittedFunction obj...',
    'native_dropout_backward':
        'missing in eagergrad: aten op aten.native_dropout_backward.default',
    'new_empty':
        'uninitialized memory: values are arbitrary in torch (shape/dtype tested in test_tensor...',
    'new_empty_strided':
        'uninitialized memory: values are arbitrary in torch (shape/dtype tested in test_tensor...',
    'nn.functional.adaptive_avg_pool1d':
        'missing in eagergrad: adaptive_avg_pool1d',
    'nn.functional.avg_pool1d':
        'missing in eagergrad: avg_pool1d',
    'nn.functional.bilinear':
        'missing in eagergrad: bilinear',
    'nn.functional.conv1d':
        'missing in eagergrad: conv1d',
    'nn.functional.conv2d':
        'missing in eagergrad: conv2d',
    'nn.functional.conv3d':
        'missing in eagergrad: conv3d',
    'nn.functional.conv_transpose1d':
        'missing in eagergrad: conv_transpose1d',
    'nn.functional.conv_transpose2d':
        'missing in eagergrad: conv_transpose2d',
    'nn.functional.conv_transpose3d':
        'missing in eagergrad: conv_transpose3d',
    'nn.functional.threshold':
        'missing in eagergrad: nn.functional._threshold',
    'nonzero_static':
        'missing in eagergrad: nonzero_static',
    'ormqr':
        'missing in eagergrad: ormqr',
    'permute_copy':
        'missing in eagergrad: permute_copy',
    'ravel':
        'missing in eagergrad: ravel',
    'resolve_neg':
        'missing in eagergrad: resolve_neg',
    'scalar_tensor':
        'missing in eagergrad: scalar_tensor',
    'slice':
        'missing in eagergrad: aten op aten.slice.Tensor',
    'sparse.mm.reduce':
        'missing in eagergrad: unknown torch callable _sparse_mm',
    'sparse.sampled_addmm':
        'missing in eagergrad: unknown torch callable sparse_sampled_addmm',
    'split_with_sizes':
        'missing in eagergrad: split_with_sizes',
    'split_with_sizes_copy':
        'missing in eagergrad: split_with_sizes_copy',
    'squeeze_copy':
        'missing in eagergrad: squeeze_copy',
    'stft':
        'missing in eagergrad: stft',
    't_copy':
        'missing in eagergrad: t_copy',
    'torch._scaled_mm':
        'missing in eagergrad: _scaled_mm',
    'torch._scaled_mm_v2':
        'missing in eagergrad: _scaled_mm_v2',
    'torch.ops.aten._efficient_attention_forward':
        'missing in eagergrad: aten op aten._efficient_attention_forward',
    'torch.ops.aten._flash_attention_forward':
        'missing in eagergrad: aten op aten._flash_attention_forward',
    'torch.ops.aten._safe_softmax.default':
        'missing in eagergrad: aten op aten._safe_softmax.default',
    'transpose_copy':
        'missing in eagergrad: transpose_copy',
    'unbind_copy':
        'missing in eagergrad: unbind_copy',
    'unfold_copy':
        'missing in eagergrad: unfold_copy',
    'unravel_index':
        'missing in eagergrad: unravel_index',
    'unsqueeze_copy':
        'missing in eagergrad: unsqueeze_copy',
    'view_copy':
        'missing in eagergrad: view_copy',
}

NONDETERMINISTIC = {
    'bernoulli':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'cauchy':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'exponential':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'geometric':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'log_normal':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'multinomial':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'nn.functional.alpha_dropout':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'nn.functional.dropout':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'nn.functional.dropout2d':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'nn.functional.dropout3d':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'nn.functional.feature_alpha_dropout.with_train':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'nn.functional.feature_alpha_dropout.without_train':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'nn.functional.fractional_max_pool2d':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'nn.functional.fractional_max_pool3d':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'nn.functional.rrelu':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'normal':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'normal.in_place':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'normal.number_mean':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'pca_lowrank':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'rand_like':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'randint':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'randint_like':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'randn':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'randn_like':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'svd_lowrank':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
    'uniform':
        'random sampling: tested statistically and for generator reproducibility (test_random_o...',
}

XFAIL = {
    'H/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.H yet',
    'H/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.H yet',
    'H/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.H yet',
    '__radd__/errors':
        'error inputs: Failed: DID NOT RAISE...',
    '__rand__/errors':
        'error inputs: Failed: DID NOT RAISE...',
    '__rdiv__/errors':
        'error inputs: AssertionError: __rdi...',
    '__rmul__/errors':
        'error inputs: Failed: DID NOT RAISE...',
    '__ror__/errors':
        'error inputs: Failed: DID NOT RAISE ...',
    '__rxor__/errors':
        'error inputs: Failed: DID NOT RAISE...',
    '_chunk_cat/errors':
        'error inputs: AssertionError: _ch...',
    'amax/errors':
        'error inputs: IndexError: amax(): Expec...',
    'amin/errors':
        'error inputs: IndexError: amin(): Expec...',
    'aminmax/errors':
        'error inputs: ValueError: number of ...',
    'arange/errors':
        'error inputs: Failed: DID NOT RAISE <...',
    'arange/float32':
        "not implemented: AttributeError: 'int' object has no attribute 'shape'",
    'arange/float64':
        "not implemented: AttributeError: 'int' object has no attribute 'shape'",
    'as_strided.partial_views/float64':
        'RuntimeError: setStorage: sizes [2, 2], strides [1, 2], storage offset 10, and itemsiz...',
    'as_strided_scatter/errors':
        'error inputs: AssertionEr...',
    'atleast_1d/float64':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'atleast_2d/float64':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'atleast_3d/float64':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'bfloat16/float64':
        'AssertionError: Not equal to tolerance rtol=0.0013, atol=0.001',
    'bitwise_and/errors':
        'error inputs: Failed: DID NOT RA...',
    'bitwise_or/errors':
        'error inputs: Failed: DID NOT RAI...',
    'bitwise_xor/errors':
        'error inputs: Failed: DID NOT RA...',
    'cat/complex128':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'cat/errors':
        'error inputs: TypeError: cat() got an un...',
    'cat/float32':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'cat/float64':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'chalf/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.chalf yet',
    'chalf/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.chalf yet',
    'chalf/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.chalf yet',
    'char/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.char yet',
    'char/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.char yet',
    'char/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.char yet',
    'cholesky/float64':
        'IndexError: index is out of bounds for axis 2 with size 0',
    'cholesky_inverse/complex128':
        'ValueError: attempt to get argmax of an empty sequence',
    'cholesky_inverse/float32':
        'ValueError: attempt to get argmax of an empty sequence',
    'cholesky_inverse/float64':
        'ValueError: attempt to get argmax of an empty sequence',
    'column_stack/complex128':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'column_stack/float32':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'column_stack/float64':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'complex/errors':
        'error inputs: TypeError: _complex() ...',
    'cov/errors':
        'error inputs: AssertionError: cov: eager...',
    'diagonal_copy/errors':
        'error inputs: AssertionError: ...',
    'dstack/complex128':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'dstack/float32':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'dstack/float64':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'einsum/complex128':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'einsum/float32':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'einsum/float64':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'empty_permuted/errors':
        'error inputs: AssertionError:...',
    'eq/errors':
        'error inputs: Failed: DID NOT RAISE <clas...',
    'eye/complex128':
        "not implemented: AttributeError: 'int' object has no attribute 'shape'",
    'eye/errors':
        'error inputs: ValueError: negative dimen...',
    'eye/float32':
        "not implemented: AttributeError: 'int' object has no attribute 'shape'",
    'eye/float64':
        "not implemented: AttributeError: 'int' object has no attribute 'shape'",
    'full/complex128':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'full/float32':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'full/float64':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'gather/errors':
        'error inputs: Failed: DID NOT RAISE <...',
    'ge/errors':
        'error inputs: Failed: DID NOT RAISE <clas...',
    'gradient/errors':
        'error inputs: AssertionError: gradi...',
    'grid_sampler_2d/float64':
        "NotImplementedError: not implemented: torch.nn.functional.grid_sample(mode='bicubic') yet",
    'gt/errors':
        'error inputs: Failed: DID NOT RAISE <clas...',
    'histogramdd/errors':
        'error inputs: AssertionError: hi...',
    'hsplit/errors':
        'error inputs: ValueError: invalid lit...',
    'hstack/complex128':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'hstack/float32':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'hstack/float64':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'index_add/errors':
        'error inputs: Failed: DID NOT RAIS...',
    'index_fill/float64':
        'AssertionError: Not equal to tolerance rtol=1e-06, atol=1e-06',
    'index_select/errors':
        'error inputs: TypeError: index_...',
    'isclose/errors':
        'error inputs: Failed: DID NOT RAISE ...',
    'jiterator_binary/errors':
        'error inputs: AssertionErro...',
    'kthvalue/errors':
        'error inputs: TypeError: kthvalue()...',
    'le/errors':
        'error inputs: Failed: DID NOT RAISE <clas...',
    'linalg.cholesky/float64':
        'IndexError: index is out of bounds for axis 2 with size 0',
    'linalg.cholesky_ex/float64':
        'IndexError: index is out of bounds for axis 2 with size 0',
    'linalg.det/complex128':
        'ValueError: attempt to get argmax of an empty sequence',
    'linalg.det/float32':
        'ValueError: attempt to get argmax of an empty sequence',
    'linalg.det/float64':
        'ValueError: attempt to get argmax of an empty sequence',
    'linalg.eig/float64':
        'AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07',
    'linalg.eigh/complex128':
        'AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07',
    'linalg.eigh/float32':
        'AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05',
    'linalg.eigh/float64':
        'AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07',
    'linalg.eigvals/float64':
        'ValueError: attempt to get argmax of an empty sequence',
    'linalg.inv/float64':
        'ValueError: attempt to get argmax of an empty sequence',
    'linalg.inv_ex/float64':
        'ValueError: attempt to get argmax of an empty sequence',
    'linalg.ldl_factor/complex128':
        "NotImplementedError: not implemented: torch.linalg.ldl_factor yet (LAPACK's Bunch-Kaufm..",
    'linalg.ldl_factor/float32':
        "NotImplementedError: not implemented: torch.linalg.ldl_factor yet (LAPACK's Bunch-Kaufm..",
    'linalg.ldl_factor/float64':
        "NotImplementedError: not implemented: torch.linalg.ldl_factor yet (LAPACK's Bunch-Kaufm..",
    'linalg.ldl_factor_ex/complex128':
        "NotImplementedError: not implemented: torch.linalg.ldl_factor_ex yet (LAPACK's Bunch-K...",
    'linalg.ldl_factor_ex/float32':
        "NotImplementedError: not implemented: torch.linalg.ldl_factor_ex yet (LAPACK's Bunch-K...",
    'linalg.ldl_factor_ex/float64':
        "NotImplementedError: not implemented: torch.linalg.ldl_factor_ex yet (LAPACK's Bunch-K...",
    'linalg.ldl_solve/complex128':
        "NotImplementedError: not implemented: torch.linalg.ldl_solve yet (LAPACK's Bunch-Kaufm...",
    'linalg.ldl_solve/float32':
        "NotImplementedError: not implemented: torch.linalg.ldl_solve yet (LAPACK's Bunch-Kaufm...",
    'linalg.ldl_solve/float64':
        "NotImplementedError: not implemented: torch.linalg.ldl_solve yet (LAPACK's Bunch-Kaufm...",
    'linalg.multi_dot/complex128':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'linalg.multi_dot/float32':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'linalg.multi_dot/float64':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'linalg.pinv.hermitian/float64':
        'ValueError: zero-size array to reduction operation max which has no identity',
    'linalg.slogdet/complex128':
        'ValueError: attempt to get argmax of an empty sequence',
    'linalg.slogdet/float32':
        'ValueError: attempt to get argmax of an empty sequence',
    'linalg.slogdet/float64':
        'ValueError: attempt to get argmax of an empty sequence',
    'linalg.solve/float64':
        'ValueError: attempt to get argmax of an empty sequence',
    'linalg.solve_ex/float64':
        'ValueError: attempt to get argmax of an empty sequence',
    'linspace.tensor_overload/errors':
        'error inputs: Faile...',
    'linspace.tensor_overload/float64':
        "not implemented: AttributeError: 'int' object has no attribute 'shape'",
    'linspace/complex128':
        "not implemented: AttributeError: 'float' object has no attribute 'shape'",
    'linspace/errors':
        'error inputs: Failed: DID NOT RAISE...',
    'linspace/float32':
        "not implemented: AttributeError: 'float' object has no attribute 'shape'",
    'linspace/float64':
        "not implemented: AttributeError: 'float' object has no attribute 'shape'",
    'logcumsumexp/float32':
        'AssertionError: Not equal to tolerance rtol=0.00013, atol=0.0001',
    'logdet/complex128':
        'ValueError: attempt to get argmax of an empty sequence',
    'logdet/float32':
        'ValueError: attempt to get argmax of an empty sequence',
    'logdet/float64':
        'ValueError: attempt to get argmax of an empty sequence',
    'logical_and/errors':
        'error inputs: Failed: DID NOT RA...',
    'logical_or/errors':
        'error inputs: Failed: DID NOT RAI...',
    'logical_xor/errors':
        'error inputs: Failed: DID NOT RA...',
    'logspace.tensor_overload/complex128':
        'ValueError: Triggering __jax_array__() during abstractification is no longer supported...',
    'logspace.tensor_overload/errors':
        'error inputs: Value...',
    'logspace.tensor_overload/float32':
        'ValueError: Triggering __jax_array__() during abstractification is no longer supported...',
    'logspace.tensor_overload/float64':
        'ValueError: Triggering __jax_array__() during abstractification is no longer supported...',
    'logspace/complex128':
        "not implemented: AttributeError: 'int' object has no attribute 'shape'",
    'logspace/errors':
        'error inputs: ValueError: Number of...',
    'logspace/float32':
        "not implemented: AttributeError: 'int' object has no attribute 'shape'",
    'logspace/float64':
        "not implemented: AttributeError: 'int' object has no attribute 'shape'",
    'lt/errors':
        'error inputs: Failed: DID NOT RAISE <clas...',
    'masked.amax/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.amax/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.amin/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.amin/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.argmax/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.argmax/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.argmin/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.argmin/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.cumprod/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.cumprod/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.cumprod/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.cumsum/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.cumsum/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.cumsum/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.log_softmax/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.log_softmax/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.logaddexp/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.logaddexp/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.logsumexp/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.logsumexp/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.logsumexp/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.mean/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.mean/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.mean/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.median/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.median/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.norm/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.norm/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.normalize/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.normalize/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.normalize/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.prod/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.prod/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.prod/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.softmax/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.softmax/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.softmin/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.softmin/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.std/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.std/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.std/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.sum/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.sum/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.sum/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.var/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.var/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked.var/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.layout yet',
    'masked_fill/errors':
        'error inputs: TypeError: float()...',
    'masked_select/errors':
        'error inputs: TypeError: maske...',
    'max_pool2d_with_indices_backward/float32':
        "not implemented: AttributeError: module 'eagergrad.ops' has no attribute 'aten'",
    'max_pool2d_with_indices_backward/float64':
        "not implemented: AttributeError: module 'eagergrad.ops' has no attribute 'aten'",
    'meshgrid.list_of_tensors/complex128':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'meshgrid.list_of_tensors/float32':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'meshgrid.list_of_tensors/float64':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'movedim/errors':
        'error inputs: Failed: DID NOT RAISE ...',
    'narrow/errors':
        'error inputs: RuntimeError: start (11...',
    'narrow/float64':
        'ValueError: Triggering __jax_array__() during abstractification is no longer supported...',
    'narrow_copy/errors':
        'error inputs: IndexError: Dimens...',
    'ne/errors':
        'error inputs: Failed: DID NOT RAISE <clas...',
    'neg/errors':
        'error inputs: TypeError: neg does not ac...',
    'nn.functional.avg_pool1d/errors':
        'error inputs: Asser...',
    'nn.functional.conv1d/errors':
        'error inputs: Assertion...',
    'nn.functional.conv2d/errors':
        'error inputs: Assertion...',
    'nn.functional.conv3d/errors':
        'error inputs: Assertion...',
    'nn.functional.grid_sample/float64':
        'NotImplementedError: not implemented: torch.nn.functional.grid_sample for 5-D input yet',
    'nn.functional.interpolate.area/float64':
        'NotImplementedError: not implemented: torch.nn.functional.adaptive_avg_pool3d yet',
    'nn.functional.linear_cross_entropy.chunked/float32':
        'ValueError: acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float...',
    'nn.functional.linear_cross_entropy.chunked/float64':
        'ValueError: acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float...',
    'nn.functional.linear_cross_entropy.chunked_none/float32':
        'ValueError: acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float...',
    'nn.functional.linear_cross_entropy.chunked_none/float64':
        'ValueError: acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float...',
    'nn.functional.max_pool1d/errors':
        'error inputs: Value...',
    'nn.functional.multi_head_attention_forward/float32':
        'AssertionError: Not equal to tolerance rtol=1.3e-05, atol=1e-05',
    'nn.functional.multi_head_attention_forward/float64':
        'AssertionError: Not equal to tolerance rtol=1e-07, atol=1e-07',
    'nn.functional.rms_norm/errors':
        'error inputs: Failed:...',
    'nn.functional.triplet_margin_with_distance_loss/complex128':
        "TypeError: pairwise_distance(): argument 'x1' (position 1) must be Tensor, not Tensor",
    'nn.functional.triplet_margin_with_distance_loss/float32':
        "TypeError: pairwise_distance(): argument 'x1' (position 1) must be Tensor, not Tensor",
    'nn.functional.triplet_margin_with_distance_loss/float64':
        "TypeError: pairwise_distance(): argument 'x1' (position 1) must be Tensor, not Tensor",
    'norm.nuc/complex128':
        "NotImplementedError: not implemented: torch.norm(p='nuc') yet",
    'norm.nuc/float32':
        "NotImplementedError: not implemented: torch.norm(p='nuc') yet",
    'norm.nuc/float64':
        "NotImplementedError: not implemented: torch.norm(p='nuc') yet",
    'ones/complex128':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'ones/float32':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'ones/float64':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'ormqr/errors':
        'error inputs: AssertionError: ormqr: e...',
    'remainder/errors':
        'error inputs: Failed: DID NOT RAIS...',
    'resize_/complex128':
        'NotImplementedAPI: not implemented: torch.Tensor.resize_ yet',
    'resize_/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.resize_ yet',
    'resize_/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.resize_ yet',
    'resize_as_/complex128':
        'NotImplementedAPI: not implemented: torch.resize_as_ yet',
    'resize_as_/float32':
        'NotImplementedAPI: not implemented: torch.resize_as_ yet',
    'resize_as_/float64':
        'NotImplementedAPI: not implemented: torch.resize_as_ yet',
    'roll/errors':
        'error inputs: ValueError: axis 0 is out...',
    'rsub/errors':
        'error inputs: Failed: DID NOT RAISE <cl...',
    'scatter/errors':
        'error inputs: ValueError: Incompatib...',
    'scatter_add/errors':
        'error inputs: ValueError: Incomp...',
    'signal.windows.bartlett/float32':
        'ValueError: bartlett expects float32 or float64 dtypes, got: torch.float32',
    'signal.windows.bartlett/float64':
        'ValueError: bartlett expects float32 or float64 dtypes, got: torch.float64',
    'signal.windows.blackman/float32':
        'ValueError: blackman expects float32 or float64 dtypes, got: torch.float32',
    'signal.windows.blackman/float64':
        'ValueError: blackman expects float32 or float64 dtypes, got: torch.float64',
    'signal.windows.cosine/float32':
        'ValueError: cosine expects float32 or float64 dtypes, got: torch.float32',
    'signal.windows.cosine/float64':
        'ValueError: cosine expects float32 or float64 dtypes, got: torch.float64',
    'signal.windows.exponential/float32':
        'ValueError: exponential expects float32 or float64 dtypes, got: torch.float32',
    'signal.windows.exponential/float64':
        'ValueError: exponential expects float32 or float64 dtypes, got: torch.float64',
    'signal.windows.gaussian/float32':
        'ValueError: gaussian expects float32 or float64 dtypes, got: torch.float32',
    'signal.windows.gaussian/float64':
        'ValueError: gaussian expects float32 or float64 dtypes, got: torch.float64',
    'signal.windows.general_cosine/errors':
        'error inputs: ...',
    'signal.windows.general_cosine/float32':
        'ValueError: general_cosine expects float32 or float64 dtypes, got: torch.float32',
    'signal.windows.general_cosine/float64':
        'ValueError: general_cosine expects float32 or float64 dtypes, got: torch.float64',
    'signal.windows.general_hamming/float32':
        'ValueError: general_cosine expects float32 or float64 dtypes, got: torch.float32',
    'signal.windows.general_hamming/float64':
        'ValueError: general_cosine expects float32 or float64 dtypes, got: torch.float64',
    'signal.windows.hamming/float32':
        'ValueError: general_cosine expects float32 or float64 dtypes, got: torch.float32',
    'signal.windows.hamming/float64':
        'ValueError: general_cosine expects float32 or float64 dtypes, got: torch.float64',
    'signal.windows.hann/float32':
        'ValueError: general_cosine expects float32 or float64 dtypes, got: torch.float32',
    'signal.windows.hann/float64':
        'ValueError: general_cosine expects float32 or float64 dtypes, got: torch.float64',
    'signal.windows.kaiser/float32':
        'ValueError: kaiser expects float32 or float64 dtypes, got: torch.float32',
    'signal.windows.kaiser/float64':
        'ValueError: kaiser expects float32 or float64 dtypes, got: torch.float64',
    'signal.windows.nuttall/float32':
        'ValueError: general_cosine expects float32 or float64 dtypes, got: torch.float32',
    'signal.windows.nuttall/float64':
        'ValueError: general_cosine expects float32 or float64 dtypes, got: torch.float64',
    'squeeze.multiple/float64':
        'IndexError: tuple index out of range',
    'stack/complex128':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'stack/float32':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    'stack/float64':
        "not implemented: AttributeError: 'list' object has no attribute 'shape'",
    't_copy/errors':
        'error inputs: AssertionError: t_copy:...',
    'take/errors':
        'error inputs: TypeError: take() got an ...',
    'to/complex128':
        'TypeError: device() received an invalid combination of arguments - got (bool)',
    'to/float32':
        'TypeError: device() received an invalid combination of arguments - got (bool)',
    'to/float64':
        'TypeError: device() received an invalid combination of arguments - got (bool)',
    'to_sparse/float32':
        'NotImplementedAPI: not implemented: torch.Tensor.to_sparse yet',
    'to_sparse/float64':
        'NotImplementedAPI: not implemented: torch.Tensor.to_sparse yet',
    'tril_indices/int64':
        "not implemented: AttributeError: 'int' object has no attribute 'shape'",
    'triu_indices/int64':
        "not implemented: AttributeError: 'int' object has no attribute 'shape'",
    'unbind_copy/errors':
        'error inputs: AssertionError: un...',
    'view_copy/errors':
        'error inputs: AssertionError: view...',
    'vsplit/errors':
        'error inputs: ValueError: invalid lit...',
    'vstack/complex128':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'vstack/float32':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'vstack/float64':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'zeros/complex128':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'zeros/float32':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
    'zeros/float64':
        "not implemented: AttributeError: 'tuple' object has no attribute 'shape'",
}

TOLERANCE = {
    # float32 on samples with entries up to 2e4 cancelling to 1e-1: absolute error 2e-3
    "matrix_exp": (1.3e-5, 2e-3),
}
