/* main.c: placeholder until the command line lands. */
#include <stdio.h>
#include "oac.h"
int main(void) { puts(OAC_TOOL_NAME " " OAC_VERSION); return 0; }
