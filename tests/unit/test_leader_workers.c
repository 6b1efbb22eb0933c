/* test_leader_workers.c -- the leader's reconcile workqueue: one key never held by two workers, a key marked
 * while processed comes back, a slow key holds one worker only, and the pool ends after its work. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "leader_internal.h"
#include "rss/cleanup.h"

static void sleep_ms(long ms)
{
    nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000}, NULL);
}

/* The queue alone, one step at a time. */
static void test_queue_semantics(void **state)
{
    (void)state;
    struct leader_queue q;
    leader_queue_init(&q);
    _cleanup_json_ cJSON *listed = cJSON_Parse("{\"v\":1}");
    leader_queue_add(&q, "ns/a", NULL, false);
    leader_queue_add(&q, "ns/a", listed, true); /* merged: one entry, the listed copy, full */
    struct leader_work a, b, a2, none;
    assert_true(leader_queue_take(&q, &a, false));
    assert_string_equal(a.key, "ns/a");
    assert_true(a.full);
    assert_non_null(a.obj);
    assert_false(leader_queue_take(&q, &none, false)); /* nothing else: the merge left one entry */

    /* Marked again while a worker holds it: pending, but not handed to a second worker. */
    leader_queue_add(&q, "ns/a", NULL, false);
    leader_queue_add(&q, "ns/b", NULL, false);
    assert_true(leader_queue_take(&q, &b, false));
    assert_string_equal(b.key, "ns/b"); /* a is older but held: b goes first */
    assert_false(leader_queue_take(&q, &none, false));
    assert_false(leader_queue_idle(&q));

    /* Its worker is done: the mark made meanwhile is handed out now, as a bare mark. */
    leader_queue_done(&q, &a);
    assert_true(leader_queue_take(&q, &a2, false));
    assert_string_equal(a2.key, "ns/a");
    assert_false(a2.full);
    assert_null(a2.obj);
    leader_queue_done(&q, &a2);
    leader_queue_done(&q, &b);
    assert_true(leader_queue_idle(&q));

    /* Shut down: nothing is handed out any more, pending entries are freed with the queue. */
    leader_queue_add(&q, "ns/c", NULL, false);
    leader_queue_shutdown(&q);
    assert_false(leader_queue_take(&q, &none, true));
    leader_queue_clear(&q);
}

/* --- a pool under a storm of marks --- */

#define N_KEYS 3

struct storm {
    atomic_int in_flight[N_KEYS];
    atomic_int max_in_flight[N_KEYS];
    atomic_long seq;                /* one clock for marks and starts */
    atomic_long last_mark[N_KEYS];  /* seq of the key's last mark */
    atomic_long last_start[N_KEYS]; /* seq at the start of the key's last reconcile */
    atomic_int runs;
};

static void storm_work(void *ud, struct leader_work *w)
{
    struct storm *s = ud;
    int k = w->key[0] - 'a';
    int now = atomic_fetch_add(&s->in_flight[k], 1) + 1;
    int m = atomic_load(&s->max_in_flight[k]);
    while (now > m && !atomic_compare_exchange_weak(&s->max_in_flight[k], &m, now))
        ;
    atomic_store(&s->last_start[k], atomic_fetch_add(&s->seq, 1) + 1);
    sleep_ms(1 + rand() % 3);
    atomic_fetch_sub(&s->in_flight[k], 1);
    atomic_fetch_add(&s->runs, 1);
}

static void test_pool_one_key_one_worker(void **state)
{
    (void)state;
    static struct storm s;
    memset(&s, 0, sizeof(s));
    struct leader_queue q;
    leader_queue_init(&q);
    struct leader_pool pool;
    assert_int_equal(leader_pool_start(&pool, 8, &q, storm_work, &s), 8);
    srand(7);
    for (int i = 0; i < 3000; i++) {
        int k = rand() % N_KEYS;
        char key[2] = {(char)('a' + k), '\0'};
        atomic_store(&s.last_mark[k], atomic_fetch_add(&s.seq, 1) + 1);
        leader_queue_add(&q, key, NULL, false);
        if (i % 50 == 0)
            sleep_ms(1);
    }
    for (int i = 0; i < 2000 && !leader_queue_idle(&q); i++)
        sleep_ms(5);
    assert_true(leader_queue_idle(&q));
    leader_pool_join(&pool);
    print_message("3000 marks of %d keys: %d reconciles\n", N_KEYS, atomic_load(&s.runs));
    for (int k = 0; k < N_KEYS; k++) {
        assert_int_equal(atomic_load(&s.max_in_flight[k]), 1);
        /* The last mark is never lost: a reconcile started after it. */
        assert_true(atomic_load(&s.last_start[k]) > atomic_load(&s.last_mark[k]));
    }
    leader_queue_clear(&q);
}

/* --- a slow key --- */

struct slow {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool release, slow_done;
    atomic_int fast_runs;
};

static void slow_work(void *ud, struct leader_work *w)
{
    struct slow *s = ud;
    if (strcmp(w->key, "slow")) {
        atomic_fetch_add(&s->fast_runs, 1);
        return;
    }
    pthread_mutex_lock(&s->mu);
    while (!s->release)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    sleep_ms(200); /* still busy when the pool is asked to end */
    pthread_mutex_lock(&s->mu);
    s->slow_done = true;
    pthread_mutex_unlock(&s->mu);
}

static void test_pool_slow_key(void **state)
{
    (void)state;
    static struct slow s = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    struct leader_queue q;
    leader_queue_init(&q);
    struct leader_pool pool;
    assert_int_equal(leader_pool_start(&pool, 2, &q, slow_work, &s), 2);
    leader_queue_add(&q, "slow", NULL, true);
    sleep_ms(50);
    char key[8];
    for (int i = 0; i < 5; i++) {
        snprintf(key, sizeof(key), "f%d", i);
        leader_queue_add(&q, key, NULL, false);
        leader_queue_add(&q, "slow", NULL, false); /* marked again and again while held */
    }
    /* The other keys go through the other worker while "slow" holds its one. */
    for (int i = 0; i < 1000 && atomic_load(&s.fast_runs) < 5; i++)
        sleep_ms(10);
    assert_int_equal(atomic_load(&s.fast_runs), 5);
    pthread_mutex_lock(&s.mu);
    s.release = true;
    pthread_cond_broadcast(&s.cv);
    pthread_mutex_unlock(&s.mu);
    /* The pool ends only after the work under way: no reconcile outlives its term. */
    leader_pool_join(&pool);
    pthread_mutex_lock(&s.mu);
    assert_true(s.slow_done);
    pthread_mutex_unlock(&s.mu);
    leader_queue_clear(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_semantics),
        cmocka_unit_test(test_pool_one_key_one_worker),
        cmocka_unit_test(test_pool_slow_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
