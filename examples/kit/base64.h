// Base64 (RFC 4648, standard alphabet, '=' padding), for data: URIs.
#pragma once

#include <string>
#include <string_view>

namespace kit {

/// Every 3 bytes become 4 characters of A-Z a-z 0-9 + /; a last group of 1 or 2 bytes is
/// padded with "==" or "=". The output has 4 * ceil(n / 3) characters.
std::string base64_encode(std::string_view bytes);

}  // namespace kit
