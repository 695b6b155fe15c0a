pragma circom 2.0.0;
// circomlib's SHA-256 of a 256-bit message: the message and its padding fill one 512-bit block,
// so the circuit is one compression (about 30k constraints, a 2^15 domain), and nearly all of
// its witness is bits. The digest's 256 bits are the public outputs.
include "sha256/sha256.circom";

component main = Sha256(256);
