# Used by scripts/gpu-pack: gives each carried executable the RPATH $ORIGIN/lib, where the carry
# holds libradixmesh.so (in place of the build tree's absolute library directory).
#   cmake -DFILES="a;b;..." -P scripts/carry_rpath.cmake
foreach(file IN LISTS FILES)
  file(RPATH_SET FILE "${file}" NEW_RPATH "$ORIGIN/lib")
endforeach()
