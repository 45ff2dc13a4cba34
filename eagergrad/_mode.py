"""The thread-local grad-mode flags (engine/grad_mode.py has the context managers).

NOTE [two flags]: `STATE.enabled` is what is_grad_enabled() reports; `STATE.grad` is
whether ops record history, i.e. `enabled and not inference` (torch's inference mode
records nothing even under enable_grad). Code that switches grad mode sets both through
`set_enabled` and restores both from `get_state`.
"""
import threading


class _State(threading.local):
    def __init__(self):
        self.grad = True        # record history (enabled and not inference)
        self.enabled = True     # is_grad_enabled()
        self.inference = False  # is_inference_mode_enabled()


STATE = _State()


def get_state():
    return (STATE.grad, STATE.enabled, STATE.inference)


def restore_state(prev):
    STATE.grad, STATE.enabled, STATE.inference = prev


def set_enabled(mode):
    """Set grad mode (is_grad_enabled) in this thread; recording follows it outside
    inference mode."""
    STATE.enabled = mode
    STATE.grad = mode and not STATE.inference
