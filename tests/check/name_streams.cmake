# cmake -DPROGRAM=<corpus executable> -DNAME=<program> -DVARIANT=racy|correct -P name_streams.cmake
#
# Runs a corpus program and writes its output with the streams named as the program names them
# (s1, s2, s3, and "default" for a device's default stream), from the line the program prints
# after creating them: a test's regular expression can then require the exact pair of
# operations, streams and sequence numbers a report must name.
execute_process(COMMAND ${PROGRAM} ${NAME} ${VARIANT} OUTPUT_VARIABLE output ERROR_VARIABLE output
                RESULT_VARIABLE status)
if(output MATCHES "corpus streams: s1 (0x[0-9a-f]+) s2 (0x[0-9a-f]+) s3 (0x[0-9a-f]+)")
  set(streams "${CMAKE_MATCH_1};${CMAKE_MATCH_2};${CMAKE_MATCH_3}")
  set(index 1)
  foreach(address IN LISTS streams)
    string(REGEX REPLACE "stream ${address} \\(device [0-9]+\\)" "s${index}" output "${output}")
    math(EXPR index "${index} + 1")
  endforeach()
endif()
string(REGEX REPLACE "the default stream of device [0-9]+" "default" output "${output}")
message("${output}")
message("exit status ${status}")
