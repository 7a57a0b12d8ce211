// Anchor of the kb-mlir-pch target (cmake/KBMlirPch.h): its one source.
