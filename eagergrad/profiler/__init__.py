"""torch.profiler: record the CPU events of a program (eagergrad's ops as `aten::<name>`,
`record_function` ranges, backward nodes), summarize them (`key_averages().table()`) and
export Chrome traces. eagergrad has no device profiler: CPU is the only activity.

>>> import eagergrad as torch
>>> from eagergrad.profiler import profile, record_function, ProfilerActivity
>>> x = torch.ones(3, 4)
>>> with profile(activities=[ProfilerActivity.CPU]) as prof:
...     with record_function("block"):
...         y = torch.mm(x, x.t()).exp()
>>> [(e.name, e.cpu_parent and e.cpu_parent.name) for e in prof.events()]
[('block', None), ('aten::t', 'block'), ('aten::mm', 'block'), ('aten::exp', 'block')]
"""
from ..autograd._profiler_backend import (DeviceType, ProfilerActivity,  # noqa: F401
                                          RecordScope, supported_activities as
                                          _supported_activities)
from ..autograd.profiler import KinetoStepTracker, kineto_available, record_function  # noqa: F401
from ..optim.optimizer import Optimizer, register_optimizer_step_post_hook  # noqa: F401
from .._torch_names import module_getattr
from . import itt, profiler  # noqa: F401
from .profiler import (_KinetoProfile, ProfilerAction, profile, schedule,  # noqa: F401
                       supported_activities, tensorboard_trace_handler)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available", "DeviceType",
           "record_function"]  # (and torch's ExecutionTraceObserver, which eagergrad lacks)

__getattr__ = module_getattr("eagergrad.profiler", "torch.profiler")
