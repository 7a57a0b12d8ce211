# Shared steps of the bench/*_check.sh call builders (sourced): compile
# build/gpu/programs/*.mlir for sm_90a into build/gpu/bundles, build the
# hand-set variants of build/gpu/variants.txt (program, name, config;
# scripts/build-variant.sh), and list each matmul kernel's grid, registers,
# spills and config.
gpu_call_compile() {
  local f
  for f in build/gpu/programs/*.mlir; do
    build/bin/kb-opt "$f" --kb-compile="output=build/gpu/bundles/$(basename "$f" .mlir) chip=sm_90a" -o /dev/null
  done
}
gpu_call_variants() {
  local prog name config
  while IFS=$'\t' read -r prog name config; do
    bash scripts/build-variant.sh "build/gpu/programs/$prog.mlir" "$name" "$config" > /dev/null
  done < build/gpu/variants.txt
}
gpu_call_show() {
  local d
  for d in build/gpu/bundles/*/; do
    python3 -c "
import json, sys
for k in json.load(open(sys.argv[1] + 'manifest.json'))['kernels']:
    r = k['resources']
    if 'mma' in k.get('config', ''):
        print(f\"{sys.argv[1].split('/')[-2]:48s} grid {k['grid']} regs {r['registers']} spill {r['spill_store_bytes']}  {k['config']}\")" "$d"
  done
}
