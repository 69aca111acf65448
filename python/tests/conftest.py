"""Shared fixtures: a runtime with the dummy device enabled and a tuning
database of the test's own, and the devices every test runs on (c:0 and
dummy:0 always; others with KILN_TEST_ALL_DEVICES=1)."""
import json
import os
import tempfile

import numpy as np
import pytest

import kiln

WORK_DIR = os.environ.get("KILN_TEST_WORK_DIR") or tempfile.mkdtemp(prefix="kiln-python-")


@pytest.fixture(scope="session")
def runtime():
    config = {"plugins": {"dummy": {"enabled": True}},
              "tuning_db": os.path.join(WORK_DIR, "python-tuning.sqlite"),
              "autotune": {"n_launches": 3, "budget_s": 20, "compile_threads": 2}}
    return kiln.Runtime(json=json.dumps(config))


def _device_ids():
    ids = ["c:0", "dummy:0"]
    if os.environ.get("KILN_TEST_ALL_DEVICES") == "1":
        ids += [d.id for d in kiln.Runtime(json='{"plugins": {"dummy": {"enabled": true}}}').devices()
                if d.can_compile and d.id not in ids and d.plugin != "cblas"]
    return ids


@pytest.fixture(scope="session", params=_device_ids())
def device(request, runtime):
    return runtime.device(request.param)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def random_nonzero(rng, shape, low=-1.0, high=1.0, dtype=np.float32):
    x = rng.uniform(low, high, shape).astype(dtype)
    x[x == 0] = 0.5
    return x
