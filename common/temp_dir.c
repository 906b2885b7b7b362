/* Where temporary files go (temp_dir.h). */
#include "temp_dir.h"

#include <stdlib.h>

const char *temp_dir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && dir[0] == '/' ? dir : "/tmp";
}
