/* A program linked with -static: nothing can be preloaded into it. */
int main(void)
{
    return 0;
}
