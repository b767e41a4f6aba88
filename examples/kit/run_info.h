// What the results files record about the run that wrote them: when, and by which command.
#pragma once

#include <string>

namespace kit {

/// The current time as "YYYY-MM-DD HH:MM UTC".
std::string utc_now();

/// The program's arguments joined by single spaces (argv[0] first), as typed modulo quoting.
std::string command_line(int argc, const char* const* argv);

}  // namespace kit
