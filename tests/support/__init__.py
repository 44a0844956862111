"""What several tests share and is not a test itself: hand-set tiny models (interp_models), the stand-in Hugging Face
Hub on 127.0.0.1 (hub_standin), the model's pinned numbers (model_pin, model_pin.json) and the tracer started inside
nbgrader's kernels (exercise_trace). pyproject.toml puts tests/ on pytest's path, so a test imports them as
``from support.interp_models import uniform_model``."""
