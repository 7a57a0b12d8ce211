//===- ReferenceActivations.h - references of the activations --*- C++ -*-===//
//
// Private to kb-run's library: the float64 reference and error bound of the
// activations and simple math ops of issue #45 (ReferenceActivations.cpp),
// which evalOp calls for the ops it does not know itself, and the check of
// their attributes in a manifest (ManifestProgram.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_REFERENCEACTIVATIONS_H
#define KB_RUNTIME_REFERENCEACTIVATIONS_H

#include "kb/Runtime/Reference.h"

#include <string>
#include <vector>

namespace kb::runtime {

/// Whether `name` is one of the ops below (`binary`: minimum, maximum).
bool isActivationOp(const std::string &name, bool binary);

/// Fills `out` (shaped as the first input, err allocated) with the op's
/// float64 values and bounds, as PyTorch defines the op (NaN propagates
/// through clamp, minimum and maximum). Returns false for another op.
bool evalActivation(const ProgramOp &op,
                    const std::vector<const HostTensor *> &in, HostTensor &out);

/// The attributes of these ops in a manifest: numbers, beta > 0, bounds in
/// order, clamp given one. Throws the manifest's located error; `where` is
/// "program[i] (op)".
void checkActivationAttrs(const ProgramOp &op, const std::string &where);

} // namespace kb::runtime

#endif // KB_RUNTIME_REFERENCEACTIVATIONS_H
