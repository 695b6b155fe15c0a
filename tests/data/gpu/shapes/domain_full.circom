pragma circom 2.0.0;
// 61 constraints, two public signals and the row of the constant one: 64 rows, a 2^6 domain
// exactly full.
include "power_chain.circom";
component main {public [x]} = PowerChain(60);
