/* banned.h -- C library functions that product code must not call, made a compile error.
 *
 * Every product target (nodeagent/, leader/) is compiled with `-include rss/banned.h`; the tests and
 * the simulators are not. Why each is out:
 *   strcpy, strcat, sprintf, vsprintf, gets   no bound on what they write (snprintf, memcpy, stpcpy or
 *                                            rss_strbuf instead)
 *   strncpy                                  leaves the result unterminated when it truncates
 *   strncat                                  its bound is the space left, a classic off-by-one
 *   strtok                                   hidden static state: not thread-safe (strtok_r, strsep)
 *   gmtime, localtime                        a static result shared by every thread (the _r forms)
 *   atoi                                     no error: "12x", "" and overflow all give a number
 *                                            (strtol/strtoll with an end pointer and errno)
 * The system headers that declare them are included first, so their own declarations are untouched;
 * a later call expands to an undeclared name and fails to compile, naming the function.
 */
#ifndef RSS_BANNED_H
#define RSS_BANNED_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RSS_BANNED(func) rss_banned_function_##func##_see_include_rss_banned_h

#undef strcpy
#define strcpy(...) RSS_BANNED(strcpy)
#undef strcat
#define strcat(...) RSS_BANNED(strcat)
#undef strncpy
#define strncpy(...) RSS_BANNED(strncpy)
#undef strncat
#define strncat(...) RSS_BANNED(strncat)
#undef sprintf
#define sprintf(...) RSS_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) RSS_BANNED(vsprintf)
#undef gets
#define gets(...) RSS_BANNED(gets)
#undef strtok
#define strtok(...) RSS_BANNED(strtok)
#undef gmtime
#define gmtime(...) RSS_BANNED(gmtime)
#undef localtime
#define localtime(...) RSS_BANNED(localtime)
#undef atoi
#define atoi(...) RSS_BANNED(atoi)

#endif
