pragma circom 2.0.0;
// circomlib's SHA-256 of a 512-bit message: its padding takes a second 512-bit block, so the
// circuit is two compressions (about 60k constraints, a 2^16 domain). For bench_circom; its key is
// made in build/ by scripts/make_circom_fixtures.sh sha256x2, not committed.
include "sha256/sha256.circom";

component main = Sha256(512);
