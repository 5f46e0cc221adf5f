# The HTML report's page (assets/report/) compiled into libopprof_trace as one
# generated C file; rebuilt whenever a page file changes. The script order
# matters: core first, then the views, then the start-up code.
set(OPPROF_REPORT_DIR ${CMAKE_SOURCE_DIR}/assets/report)
set(OPPROF_REPORT_JS
  ${OPPROF_REPORT_DIR}/js/core.js
  ${OPPROF_REPORT_DIR}/js/data.js
  ${OPPROF_REPORT_DIR}/js/table.js
  ${OPPROF_REPORT_DIR}/js/overview.js
  ${OPPROF_REPORT_DIR}/js/operators.js
  ${OPPROF_REPORT_DIR}/js/timeline.js
  ${OPPROF_REPORT_DIR}/js/memory.js
  ${OPPROF_REPORT_DIR}/js/devices.js
  ${OPPROF_REPORT_DIR}/js/diff.js
  ${OPPROF_REPORT_DIR}/js/selftest.js
  ${OPPROF_REPORT_DIR}/js/main.js)
set(OPPROF_REPORT_C ${CMAKE_BINARY_DIR}/generated/report_assets.c)
add_custom_command(
  OUTPUT ${OPPROF_REPORT_C}
  COMMAND ${CMAKE_COMMAND} -DOUT=${OPPROF_REPORT_C} -DHTML=${OPPROF_REPORT_DIR}/report.html
          -DCSS=${OPPROF_REPORT_DIR}/report.css "-DJS=${OPPROF_REPORT_JS}"
          -P ${CMAKE_SOURCE_DIR}/cmake/embed_report.cmake
  DEPENDS ${OPPROF_REPORT_DIR}/report.html ${OPPROF_REPORT_DIR}/report.css ${OPPROF_REPORT_JS}
          ${CMAKE_SOURCE_DIR}/cmake/embed_report.cmake
  COMMENT "Embedding the HTML report page"
  VERBATIM)
target_sources(opprof_trace_obj PRIVATE ${OPPROF_REPORT_C})
