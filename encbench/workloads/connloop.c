/* A minimal libmariadb client that connects, runs SELECT 1 and disconnects in a loop for a
 * fixed time: the reference rate that tells whether sysbench's Lua loop (connect.lua) is the
 * bottleneck of a connection-rate measurement rather than the server.
 *
 * usage: connloop HOST PORT USER DB SECONDS THREADS SSL(0|1)
 * The password comes from MYSQL_PWD (libmariadb reads it when none is given), and with SSL=1
 * the client files are cacert.pem, client-cert.pem and client-key.pem in the working
 * directory, exactly as sysbench 1.0.20 uses them, so both clients do the same handshake.
 * Prints: connections=N seconds=S rate=R errors=E
 */
#include <mysql.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct args {
    const char *host, *user, *db;
    unsigned port;
    double seconds;
    int ssl;
    long done, errors;
};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *loop(void *p) {
    struct args *a = p;
    mysql_thread_init();
    double end = now() + a->seconds;
    while (now() < end) {
        MYSQL *m = mysql_init(NULL);
        if (a->ssl)
            mysql_ssl_set(m, "client-key.pem", "client-cert.pem", "cacert.pem", NULL, NULL);
        if (!mysql_real_connect(m, a->host, a->user, NULL, a->db, a->port, NULL, 0)
            || mysql_query(m, "SELECT 1")) {
            a->errors++;
            if (a->errors == 1)
                fprintf(stderr, "error: %s\n", mysql_error(m));
        } else {
            MYSQL_RES *r = mysql_store_result(m);
            mysql_free_result(r);
            a->done++;
        }
        mysql_close(m);
    }
    mysql_thread_end();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: connloop HOST PORT USER DB SECONDS THREADS SSL(0|1)\n");
        return 2;
    }
    int threads = atoi(argv[6]);
    if (threads < 1 || threads > 1024) {
        fprintf(stderr, "threads must be 1..1024\n");
        return 2;
    }
    mysql_library_init(0, NULL, NULL);
    struct args *a = calloc(threads, sizeof *a);
    pthread_t *t = calloc(threads, sizeof *t);
    double start = now();
    for (int i = 0; i < threads; i++) {
        a[i] = (struct args){argv[1], argv[3], argv[4], (unsigned)atoi(argv[2]),
                             atof(argv[5]), atoi(argv[7]), 0, 0};
        pthread_create(&t[i], NULL, loop, &a[i]);
    }
    long done = 0, errors = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        done += a[i].done;
        errors += a[i].errors;
    }
    double elapsed = now() - start;
    printf("connections=%ld seconds=%.3f rate=%.2f errors=%ld\n", done, elapsed,
           done / elapsed, errors);
    mysql_library_end();
    return errors ? 1 : 0;
}
