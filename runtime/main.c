/* TEMPORARY placeholder so plrun links while the runtime is written. */
#include <stdio.h>
int main(void)
{
    fprintf(stderr, "plrun: error: not built yet\n");
    return 3;
}
