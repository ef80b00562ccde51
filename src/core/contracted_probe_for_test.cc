// Built with -ffp-contract=fast (see CMakeLists.txt) to prove the startup self-check catches a
// binary whose compiler fused a*b+c.
namespace trail {
float ContractedMulAddProbe(float a, float b, float c) { return a * b + c; }
}  // namespace trail
