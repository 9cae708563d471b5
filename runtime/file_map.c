/* file_map.c: see file_map.h. */
#include "runtime/file_map.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errmsg.h"

int plc_map_file(const char *path, const char *what, void **map, size_t *size, char *err, size_t errlen)
{
    *map = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return plc_fail(err, errlen, "%s: cannot open%s%s: %s", path, what ? " " : "", what ? what : "",
                        strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return plc_fail(err, errlen, "%s: not a regular file", path);
    }
    size_t n = (size_t)st.st_size;
    if (n > 0) {
        void *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            return plc_fail(err, errlen, "%s: cannot map: %s", path, strerror(e));
        }
        *map = m;
    }
    close(fd);
    *size = n;
    return 0;
}
