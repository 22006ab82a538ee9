pytest_plugins = ["tests.conftest_ssh"]
