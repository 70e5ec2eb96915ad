/* pacer — small text helpers shared by the parsers' error messages. */
#ifndef PACER_UTIL_TEXT_H
#define PACER_UTIL_TEXT_H

/* Make a message one line: every control byte (newline included) and DEL
 * becomes '?', so text echoed from an input cannot break the line. */
void text_one_line(char *s);

#endif
