"""What the tests share and are not tests themselves: a scripted peer (net_harness), replay
builders, reference implementations, the NAT lab, real and fake servers, hostile traffic, bots
for subprocesses, and the checks of what the machine must provide.

Tests import it as ``support`` (``from support.net_harness import ...``): pytest puts tests/ on
``sys.path``, and so do the benchmarks that use the NAT lab or the flood, and the subprocess
environments of tests that name a bot here (``support.slow_bot:SlowRandom``)."""
