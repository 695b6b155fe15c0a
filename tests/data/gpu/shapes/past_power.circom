pragma circom 2.0.0;
// 62 constraints, two public signals and the row of the constant one: 65 rows, one past 2^6, so a
// 2^7 domain.
include "power_chain.circom";
component main {public [x]} = PowerChain(61);
