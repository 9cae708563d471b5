/* atomic_file.c: temporary file + fsync + rename (see atomic_file.h). */
#include "common/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void release(plc_atomic_file *af)
{
    free(af->path);
    free(af->tmp_path);
    af->path = af->tmp_path = NULL;
    af->f = NULL;
}

int plc_atomic_open(plc_atomic_file *af, const char *path, char *err, size_t errlen)
{
    memset(af, 0, sizeof *af);
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* the rename would replace a directory entry such as /dev/null */
        snprintf(err, errlen, "%s: not a regular file; refusing to replace it", path);
        errno = EEXIST;
        return -1;
    }
    size_t n = strlen(path);
    af->path = malloc(n + 1);
    af->tmp_path = malloc(n + 16);
    if (!af->path || !af->tmp_path) {
        snprintf(err, errlen, "%s: out of memory", path);
        release(af);
        return -1;
    }
    memcpy(af->path, path, n + 1);
    snprintf(af->tmp_path, n + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(af->tmp_path);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "%s: cannot create a temporary file: %s", path, strerror(e));
        release(af);
        errno = e; /* for callers that phrase their own message */
        return -1;
    }
    /* mkstemp makes the file 0600; give it the mode a plain create would */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask); /* failure is harmless: the file stays 0600 */
    af->f = fdopen(fd, "wb");
    if (!af->f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        unlink(af->tmp_path);
        release(af);
        return -1;
    }
    return 0;
}

void plc_atomic_abort(plc_atomic_file *af)
{
    if (af->f) fclose(af->f);
    if (af->tmp_path) unlink(af->tmp_path);
    release(af);
}

static void sync_directory(const char *path)
{
    /* the rename is durable once the directory entry is on disk */
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) return;
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        fsync(fd); /* best effort: some file systems refuse fsync on directories */
        close(fd);
    }
    free(dir);
}

int plc_atomic_commit(plc_atomic_file *af, char *err, size_t errlen)
{
    int rc = 0;
    if (fflush(af->f) != 0 || ferror(af->f)) {
        snprintf(err, errlen, "%s: write failed: %s", af->path, strerror(errno));
        rc = -1;
    } else if (fsync(fileno(af->f)) != 0) {
        snprintf(err, errlen, "%s: fsync failed: %s", af->path, strerror(errno));
        rc = -1;
    }
    if (fclose(af->f) != 0 && rc == 0) {
        snprintf(err, errlen, "%s: close failed: %s", af->path, strerror(errno));
        rc = -1;
    }
    af->f = NULL;
    if (rc == 0 && rename(af->tmp_path, af->path) != 0) {
        snprintf(err, errlen, "%s: cannot rename the temporary file into place: %s", af->path,
                 strerror(errno));
        rc = -1;
    }
    if (rc != 0) unlink(af->tmp_path);
    else sync_directory(af->path);
    release(af);
    return rc;
}

int plc_check_output_file(const char *what, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (!*path) {
        snprintf(err, errlen, "%s: the file name is empty", what);
        return -1;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s %s: is a directory; give a file name", what, path);
        return -1;
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s %s: not a regular file; give a file name to create or replace", what, path);
        return -1;
    }
    plc_atomic_file af;
    char msg[512];
    if (plc_atomic_open(&af, path, msg, sizeof msg)) {
        snprintf(err, errlen, "%s %s: cannot create a file there: %s", what, path, strerror(errno));
        return -1;
    }
    plc_atomic_abort(&af);
    return 0;
}

int plc_prepare_output_dir(const char *what, const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (!*dir) {
        snprintf(err, errlen, "%s: the directory name is empty", what);
        return -1;
    }
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT || mkdir(dir, 0777) != 0) {
            snprintf(err, errlen, "%s %s: cannot create the directory: %s", what, dir, strerror(errno));
            return -1;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s %s: exists and is not a directory", what, dir);
        return -1;
    }
    size_t n = strlen(dir) + 16;
    char *probe = malloc(n);
    if (!probe) {
        snprintf(err, errlen, "%s %s: out of memory", what, dir);
        return -1;
    }
    snprintf(probe, n, "%s/.probe", dir);
    plc_atomic_file af;
    char msg[512];
    int rc = 0;
    if (plc_atomic_open(&af, probe, msg, sizeof msg)) {
        snprintf(err, errlen, "%s %s: cannot write in the directory: %s", what, dir, strerror(errno));
        rc = -1;
    } else {
        plc_atomic_abort(&af);
    }
    free(probe);
    return rc;
}
