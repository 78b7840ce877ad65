#ifndef PARSE_H
#define PARSE_H
long parse_number(const char *s);
#endif
