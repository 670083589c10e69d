"""A cheap argon2 for test processes.

The service hashes every password and PIN with argon2id at 64 MiB and three passes (~0.1 s of
CPU with four threads). The suite signs up hundreds of accounts and tries thousands of PINs on
two cores, where that alone cost minutes; the tests prove what is stored and checked, not the
cost, so their processes use the smallest parameters. `vollmond serve` and the phone tests'
service processes keep the real ones (tests/store/test_store_accounts.py checks them).
"""

from __future__ import annotations

from argon2 import PasswordHasher

from vollmond.store import hashing


def use_cheap_hashing() -> None:
    hashing.use_hasher(PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))
