/*
 * The program the lock library's tests run under it: THREADS threads for SECONDS, each
 * loop taking `hot_lock` (a global every thread wants, held for a short spin) and, on
 * thread 0 only, `quiet_lock` (a global nobody else takes) and a heap mutex of its own.
 * With a third argument `wait`, one more thread loops taking `wait_lock` and waiting 1 ms
 * on a condition nobody signals (a worker idle on its queue) before releasing it. It
 * prints the loops done. Not a benchmark: the tests read the lock table, not speed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

pthread_mutex_t hot_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t quiet_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t wait_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static volatile unsigned long counter;
static double seconds;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *work(void *arg) {
    long id = (long)arg;
    pthread_mutex_t *own = malloc(sizeof *own);
    pthread_mutex_init(own, NULL);
    double until = now() + seconds;
    unsigned long loops = 0;
    while (now() < until) {
        pthread_mutex_lock(&hot_lock);
        for (int i = 0; i < 200; i++)
            counter++;
        pthread_mutex_unlock(&hot_lock);
        if (id == 0) {
            pthread_mutex_lock(&quiet_lock);
            pthread_mutex_unlock(&quiet_lock);
            pthread_mutex_lock(own);
            pthread_mutex_unlock(own);
        }
        loops++;
    }
    return (void *)loops;
}

static void *idle(void *arg) {
    (void)arg;
    double until = now() + seconds;
    while (now() < until) {
        pthread_mutex_lock(&wait_lock);
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 1000000;
        if (t.tv_nsec >= 1000000000) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&never, &wait_lock, &t);
        pthread_mutex_unlock(&wait_lock);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    seconds = argc > 2 ? atof(argv[2]) : 0.5;
    pthread_t t[64];
    if (threads < 1 || threads > 64)
        return 2;
    pthread_t waiter;
    int waits = argc > 3 && strcmp(argv[3], "wait") == 0;
    if (waits)
        pthread_create(&waiter, NULL, idle, NULL);
    for (long i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    unsigned long total = 0;
    for (int i = 0; i < threads; i++) {
        void *loops;
        pthread_join(t[i], &loops);
        total += (unsigned long)loops;
    }
    if (waits)
        pthread_join(waiter, NULL);
    printf("%lu\n", total);
    return 0;
}
