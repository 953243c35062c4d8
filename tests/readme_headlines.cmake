# The README's headline table is generated, not typed: it must equal
#   memlab report results/nvidia-h200/sm_90a/run.json --headlines
# between the README's <!-- headlines:begin --> and <!-- headlines:end --> markers.
# Regenerate with: scripts/readme_headlines.sh
execute_process(COMMAND ${MEMLAB} report ${RECORD} --headlines WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE generated RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "memlab report --headlines failed (${rc}): ${err}")
endif()
file(READ ${SOURCE_DIR}/README.md readme)
string(FIND "${readme}" "<!-- headlines:begin -->\n" begin)
string(FIND "${readme}" "<!-- headlines:end -->" end)
if(begin EQUAL -1 OR end EQUAL -1)
  message(FATAL_ERROR "README.md has no <!-- headlines:begin --> / <!-- headlines:end --> block")
endif()
math(EXPR start "${begin} + 25")
math(EXPR length "${end} - ${start}")
string(SUBSTRING "${readme}" ${start} ${length} block)
if(NOT block STREQUAL generated)
  message(FATAL_ERROR "README.md's headline table differs from `memlab report ${RECORD} --headlines`: "
                      "run scripts/readme_headlines.sh")
endif()
message(STATUS "README headline table matches ${RECORD}")
