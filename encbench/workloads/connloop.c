/* A minimal libmariadb client that connects, runs SELECT 1 and disconnects in a loop for a
 * fixed time.  Two uses: the reference rate that tells whether sysbench's Lua loop
 * (connect.lua) is the bottleneck of a connection-rate measurement rather than the server;
 * and first logins (USERS given), where each connection logs in as a user of its own,
 * USER0 … USER<USERS-1>, none twice, so that against a server whose authentication cache was
 * just emptied (MySQL's caching_sha2_password after FLUSH PRIVILEGES) every login is a full
 * one.  sysbench cannot do that: its driver logs every connection in as one user.
 *
 * usage: connloop HOST PORT USER DB SECONDS THREADS SSL(0|1) [USERS]
 * DB "" connects to no database.  With USERS the loop also ends when every user logged in.
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
    long users;   /* 0: every connection as USER */
    long *next;   /* the next user's number, shared by the threads */
    long done, errors;
};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *loop(void *p) {
    struct args *a = p;
    char user[256];
    mysql_thread_init();
    double end = now() + a->seconds;
    while (now() < end) {
        const char *who = a->user;
        if (a->users) {
            long n = __atomic_fetch_add(a->next, 1, __ATOMIC_RELAXED);
            if (n >= a->users)
                break;
            snprintf(user, sizeof user, "%s%ld", a->user, n);
            who = user;
        }
        MYSQL *m = mysql_init(NULL);
        if (a->ssl)
            mysql_ssl_set(m, "client-key.pem", "client-cert.pem", "cacert.pem", NULL, NULL);
        if (!mysql_real_connect(m, a->host, who, NULL, *a->db ? a->db : NULL, a->port, NULL, 0)
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
    if (argc != 8 && argc != 9) {
        fprintf(stderr, "usage: connloop HOST PORT USER DB SECONDS THREADS SSL(0|1) [USERS]\n");
        return 2;
    }
    int threads = atoi(argv[6]);
    if (threads < 1 || threads > 1024) {
        fprintf(stderr, "threads must be 1..1024\n");
        return 2;
    }
    long users = argc == 9 ? atol(argv[8]) : 0;
    long next = 0;
    mysql_library_init(0, NULL, NULL);
    struct args *a = calloc(threads, sizeof *a);
    pthread_t *t = calloc(threads, sizeof *t);
    double start = now();
    for (int i = 0; i < threads; i++) {
        a[i] = (struct args){argv[1], argv[3], argv[4], (unsigned)atoi(argv[2]),
                             atof(argv[5]), atoi(argv[7]), users, &next, 0, 0};
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
