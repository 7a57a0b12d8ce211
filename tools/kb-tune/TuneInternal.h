//===- TuneInternal.h - helpers shared by kb-tune's parts -------*- C++ -*-===//
//
// What the parts of TuneCore (TuneCore.cpp, TuneModel.cpp, TuneSearch.cpp,
// TuneDatabase.cpp, TuneSummary.cpp) share beyond TuneCore.h: small
// readers of a candidate's fields and the model's order. Private to tools/kb-tune.
//
//===----------------------------------------------------------------------===//

#ifndef KB_TOOLS_KB_TUNE_TUNEINTERNAL_H
#define KB_TOOLS_KB_TUNE_TUNEINTERNAL_H

#include "TuneCore.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kbtune {

/// The integers of a field's text, in order ("[128, 64, 32]" -> 128, 64, 32).
std::vector<int64_t> sizes(const std::string &text);
/// A count field of `c` (its first integer), or 0 where it is unset.
int64_t count(const Candidate &c, const char *field);
/// The surviving candidates in the model's order (its rank).
std::vector<int> byRank(const Plan &p);

} // namespace kbtune

#endif // KB_TOOLS_KB_TUNE_TUNEINTERNAL_H
