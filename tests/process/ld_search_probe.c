/*
 * ld_search.c from the command line, for ld_search.sh:
 *   ld_search_probe cache CACHE SONAME   prints the path the cache gives, or "(none)"
 *   ld_search_probe conf CONF            prints the folders the configuration lists, or "(none)"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ld_search.h"

int main(int argc, char **argv)
{
	char *found;

	if (argc == 4 && !strcmp(argv[1], "cache"))
		found = ld_cache_find(argv[2], argv[3]);
	else if (argc == 3 && !strcmp(argv[1], "conf"))
		found = ld_conf_dirs(argv[2]);
	else {
		fprintf(stderr, "usage: ld_search_probe cache CACHE SONAME | conf CONF\n");
		return 2;
	}
	printf("%s\n", found ? found : "(none)");
	free(found);
	return 0;
}
