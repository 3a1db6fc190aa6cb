/* The pod sandbox's pause process (the node runs no registry image): it holds the pod's
 * namespaces, reaps zombies as PID 1 would, and exits on SIGINT/SIGTERM. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_term(int sig) { (void)sig; _exit(0); }
static void on_chld(int sig) {
    (void)sig;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

int main(void) {
    struct sigaction term = {.sa_handler = on_term};
    struct sigaction chld = {.sa_handler = on_chld, .sa_flags = SA_NOCLDSTOP};
    if (sigaction(SIGINT, &term, NULL) < 0 || sigaction(SIGTERM, &term, NULL) < 0 ||
        sigaction(SIGCHLD, &chld, NULL) < 0)
        return 1;
    for (;;) pause();
}
