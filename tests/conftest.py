pytest_plugins = ["tests.conftest_ssh", "tests.conftest_ceph", "tests.replay_recording"]
